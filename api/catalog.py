"""Where the API's contracts come from: the Schema Registry and, optionally, a contracts directory.

Registered contracts are the value subjects whose schema metadata names a contract (what
``registry_sync`` pushes); each registered version of that subject is one contract version.
A contracts directory adds the contract files it holds (one version each) that the registry
does not know. The registry is always spoken to over its Confluent REST protocol — in process
for the embedded registry, over the network for an external one — so both behave the same.

Listings are kept for ``ttl`` seconds and dropped at once when this service writes to the
registry (:meth:`Catalog.invalidate`) or, for the embedded registry, when its SQLite file was
written by another process (a ``watch`` callback, checked before every read). Renderings are
cached as the answer's bytes with an ETag per contract version, render and part.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, cast

import orjson

from contracts.contract import CompatibilityLevel, Contract, load_contract, validate_name
from contracts.diff.verdict import ContractVerdict, ExceptionPolicy, FailOn
from contracts.errors import ConflictError, ContractsError, NotFoundError
from registry_sync.client import AsyncRegistryClient as RegistryClient
from registry_sync.desired import DesiredSubject, at_level
from registry_sync.protocol import Registered, RegistryRefusedError
from registry_sync.sync import Judgement, judge_subject

if TYPE_CHECKING:
    from api.locks import SubjectLocks
    from api.offload import Offload

log = logging.getLogger("cdc_contracts.api")
T = TypeVar("T")

Source = Literal["registry", "directory"]
CONTRACT_SUFFIXES: Final = (".yaml", ".yml", ".json")
RENDER_TARGETS: Final = ("connect", "avro", "spark-json", "spark-ddl")
PARTS: Final = ("key", "value", "row")


@dataclass(frozen=True, slots=True)
class VersionRef:
    """One version of a contract and where it is kept."""

    name: str
    version: int
    source: Source
    subjects: Mapping[str, str] = field(default_factory=dict)  # part -> subject
    path: Path | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    """A contract's summary and its versions, oldest first."""

    name: str
    format: str
    topic: str | None
    owner: str | None
    source: Source
    versions: tuple[VersionRef, ...]

    @property
    def latest(self) -> VersionRef:
        return self.versions[-1]

    def version(self, number: int) -> VersionRef:
        for ref in self.versions:
            if ref.version == number:
                return ref
        known = ", ".join(str(r.version) for r in self.versions)
        raise NotFoundError(f"contract {self.name!r} has no version {number} (versions: {known})")

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "format": self.format,
            "topic": self.topic,
            "owner": self.owner,
            "source": self.source,
            "latest_version": self.latest.version,
            "versions": [r.version for r in self.versions],
        }


@dataclass(frozen=True, slots=True)
class Loaded:
    """A resolved contract version."""

    ref: VersionRef
    contract: Contract
    ids: Mapping[str, int] = field(default_factory=dict)

    def to_json(self, versions: list[int]) -> dict[str, Any]:
        return {
            "name": self.ref.name,
            "version": self.ref.version,
            "versions": versions,
            "source": self.ref.source,
            "subjects": dict(self.ref.subjects),
            "schema_ids": dict(self.ids),
            "contract": self.contract.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class Rendered:
    """An answer body, serialized once, and its strong ETag."""

    body: bytes
    etag: str

    @classmethod
    def of(cls, body: bytes) -> Rendered:
        return cls(body, '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"')


RenderKey = tuple[str, int, Source, str, str]


# --- the catalog --------------------------------------------------------------------------------


class Catalog:
    """Contracts by name, from the registry and a contracts directory."""

    def __init__(
        self,
        registry: RegistryClient | None,
        directory: Path | None = None,
        ttl: float = 2.0,
        changed: Callable[[], bool] | None = None,
    ) -> None:
        self.registry = registry
        self.directory = directory.resolve() if directory is not None else None
        self.ttl = ttl
        self._changed = changed
        self.problems: list[str] = []
        self._index: dict[str, Entry] | None = None
        self._built_at = 0.0
        self._generation = 0
        self._lock = asyncio.Lock()
        self._refresh: asyncio.Task[None] | None = None
        self._contracts: dict[tuple[str, int, Source], Loaded] = {}
        self._renderings: dict[RenderKey, Rendered] = {}

    # --- index ----------------------------------------------------------------------------------

    def invalidate(self) -> None:
        """Forget the listing and every cached contract and rendering (the registry changed)."""
        self._generation += 1
        self._index = None
        self._contracts.clear()
        self._renderings.clear()

    def _current_index(self) -> dict[str, Entry] | None:
        """The listing if it still holds: invalidated first when the ``changed`` check says so."""
        if self._changed is not None and self._changed():
            self.invalidate()
        return self._index

    async def index(self) -> dict[str, Entry]:
        """Every contract by name.

        After an invalidation the next call rebuilds it; when it is merely older than the TTL
        the current listing is answered while one background task refreshes it.
        """
        index = self._current_index()
        if index is None:
            return await self._rebuild()
        if time.monotonic() - self._built_at >= self.ttl and self._refresh is None:
            self._refresh = asyncio.create_task(self._background_rebuild())
        return index

    async def _rebuild(self) -> dict[str, Entry]:
        async with self._lock:
            if self._index is not None:
                return self._index
            generation = self._generation
            built = await self._build()
            if generation == self._generation:
                self._index, self._built_at = built, time.monotonic()
            return built

    async def _background_rebuild(self) -> None:
        try:
            async with self._lock:
                generation = self._generation
                built = await self._build()
                if generation == self._generation:
                    self._index, self._built_at = built, time.monotonic()
        except ContractsError as err:
            log.warning("catalog refresh failed: %s", err.one_line())
            self._built_at = time.monotonic()
        finally:
            self._refresh = None

    async def _build(self) -> dict[str, Entry]:
        problems: list[str] = []
        entries: dict[str, Entry] = {}
        if self.registry is not None:
            entries.update(await self._registry_entries(problems))
        for name, entry in self._directory_entries(problems).items():
            entries.setdefault(name, entry)
        self.problems = problems
        return dict(sorted(entries.items()))

    async def _registry_entries(self, problems: list[str]) -> dict[str, Entry]:
        assert self.registry is not None
        return await registered_entries(self.registry, problems)

    def _directory_entries(self, problems: list[str]) -> dict[str, Entry]:
        if self.directory is None:
            return {}
        entries: dict[str, Entry] = {}
        for path in sorted(self.directory.rglob("*")):
            if path.suffix not in CONTRACT_SUFFIXES or not path.is_file():
                continue
            if not path.resolve().is_relative_to(self.directory):
                problems.append(f"{path}: skipped, it points outside the contracts directory")
                continue
            try:
                contract = load_contract(path)
            except ContractsError as err:
                problems.append(err.one_line())
                continue
            if contract.name in entries:
                problems.append(f"{path}: contract {contract.name!r} is defined twice; skipped")
                continue
            ref = VersionRef(contract.name, 1, "directory", {}, path)
            self._contracts.setdefault((contract.name, 1, "directory"), Loaded(ref, contract))
            entries[contract.name] = Entry(
                contract.name, contract.format, contract.topic, contract.owner, "directory", (ref,)
            )
        return entries

    # --- reads ----------------------------------------------------------------------------------

    async def entry(self, name: str) -> Entry:
        """The named contract's entry, or :class:`NotFoundError`."""
        validate_name(name)
        found = (await self.index()).get(name)
        if found is None:
            raise NotFoundError(f"no contract named {name!r}", f"/contracts/{name}")
        return found

    async def list(
        self, *, format: str | None, topic: str | None, prefix: str | None
    ) -> list[Entry]:
        """Contracts matching every given filter, by name."""
        return [
            e
            for e in (await self.index()).values()
            if (format is None or e.format == format)
            and (topic is None or e.topic == topic)
            and (prefix is None or e.name.startswith(prefix))
        ]

    async def load(self, ref: VersionRef) -> Loaded:
        """The contract at ``ref`` (cached: a registered version never changes)."""
        key = (ref.name, ref.version, ref.source)
        found = self._contracts.get(key)
        if found is not None:
            return found
        if ref.source == "directory":
            assert ref.path is not None
            loaded = Loaded(ref, load_contract(ref.path))
        else:
            loaded = await self._load_registered(ref)
        self._contracts[key] = loaded
        return loaded

    async def _load_registered(self, ref: VersionRef) -> Loaded:
        assert self.registry is not None
        return await load_registered(self.registry, ref)

    def cached_rendering(
        self, name: str, version: int | None, to: str, part: str
    ) -> Rendered | None:
        """A rendering answered without any I/O, or None when the full route must run.

        ``version`` None is the latest. None too when the listing is missing or due for a
        refresh, so that the full route (which refreshes it) answers.
        """
        index = self._current_index()
        if index is None or time.monotonic() - self._built_at >= self.ttl:
            return None
        entry = index.get(name)
        if entry is None:
            return None
        ref: VersionRef | None = entry.latest
        if version is not None:
            ref = next((r for r in entry.versions if r.version == version), None)
        if ref is None:
            return None
        return self._renderings.get((ref.name, ref.version, ref.source, to, part))

    async def rendering(self, loaded: Loaded, to: str, part: str) -> Rendered:
        """The JSON answer for a rendering of a contract version (cached)."""
        ref = loaded.ref
        key = (ref.name, ref.version, ref.source, to, part)
        found = self._renderings.get(key)
        if found is not None:
            return found
        from contracts.render import Part, RenderTarget, render_contract

        rendered = render_contract(loaded.contract, cast(RenderTarget, to), cast(Part, part))
        schema = (
            json.loads(rendered) if to != "spark-ddl" and isinstance(rendered, str) else rendered
        )
        body = Rendered.of(
            orjson.dumps(
                {
                    "name": ref.name,
                    "version": ref.version,
                    "render": to,
                    "part": part,
                    "schema": schema,
                }
            )
        )
        self._renderings[key] = body
        return body

    # --- writes ---------------------------------------------------------------------------------


# --- contracts in the registry ------------------------------------------------------------------
# Contracts travel as schema metadata the way ``registry_sync`` pushes them (registry_sync.desired):
# every key and value subject carries ``cdc.contract.*`` identity properties and the whole
# contract as JSON, so a value subject's versions are the contract's versions.


def _properties(registered: Registered | None) -> dict[str, str]:
    return dict(registered.metadata_properties or {}) if registered is not None else {}


#: registry requests in flight at once while a listing is built
LISTING_CONCURRENCY: Final = 8


async def registered_entries(registry: RegistryClient, problems: list[str]) -> dict[str, Entry]:
    """Contracts found in the registry: value subjects whose metadata carries a contract.

    One request per subject (its latest version, which carries the metadata); a value subject
    whose latest version is above 1 also gets its version list (versions may have been deleted).
    """
    from registry_sync.desired import PROP_NAME, PROP_PART, contract_from_properties

    subjects = await registry.subjects()
    latest_of = await _gather(subjects, lambda subject: registry.version(subject, "latest"))
    by_name: dict[str, dict[str, str]] = {}
    latest: dict[str, tuple[Contract, int]] = {}
    keys: dict[str, str] = {}  # contract name -> key subject (which carries only the identity)
    for subject, found in zip(subjects, latest_of, strict=True):
        props = _properties(found)
        try:
            contract = contract_from_properties(props, f"subject {subject}")
        except ContractsError as err:
            problems.append(err.one_line())
            continue
        if contract is None and props.get(PROP_PART) == "key" and props.get(PROP_NAME):
            keys.setdefault(props[PROP_NAME], subject)
        if contract is None or found is None:
            continue
        part = props.get(PROP_PART, "value")
        parts = by_name.setdefault(contract.name, {})
        if part in parts:
            problems.append(
                f"subject {subject}: contract {contract.name!r} {part} is also in {parts[part]}"
            )
            continue
        parts[part] = subject
        if part == "value":
            latest[contract.name] = (contract, found.version or 0)

    async def versions_of(name: str) -> list[int]:
        number = latest[name][1]
        return [1] if number == 1 else await registry.versions(by_name[name]["value"])

    for name, subject in keys.items():
        if name in by_name:
            by_name[name].setdefault("key", subject)
    names = list(latest)
    entries: dict[str, Entry] = {}
    for name, versions in zip(names, await _gather(names, versions_of), strict=True):
        contract = latest[name][0]
        refs = tuple(VersionRef(name, v, "registry", by_name[name]) for v in versions)
        if refs:
            entries[name] = Entry(
                name, contract.format, contract.topic, contract.owner, "registry", refs
            )
    return entries


async def _gather(items: list[str], call: Callable[[str], Awaitable[T]]) -> list[T]:
    """``call`` for every item, at most :data:`LISTING_CONCURRENCY` at a time, in order."""
    slots = asyncio.Semaphore(LISTING_CONCURRENCY)

    async def one(item: str) -> T:
        async with slots:
            return await call(item)

    return list(await asyncio.gather(*(one(item) for item in items)))


async def load_registered(registry: RegistryClient, ref: VersionRef) -> Loaded:
    """The contract registered as version ``ref.version`` of its value subject."""
    from registry_sync.desired import contract_from_properties

    subject = ref.subjects["value"]
    found = await registry.version(subject, ref.version)
    where = f"subject {subject} version {ref.version}"
    if found is None:
        raise NotFoundError(f"{where} does not exist", subject)
    contract = contract_from_properties(_properties(found), where)
    if contract is None:
        raise NotFoundError(f"{where} carries no contract metadata", subject)
    ids = {"value": found.schema_id or 0}
    key_subject = ref.subjects.get("key")
    if key_subject is not None:
        from registry_sync.desired import desired_subjects

        key = next((d for d in desired_subjects([contract]) if d.part == "key"), None)
        held = await registry.lookup(key_subject, key.schema, key.properties) if key else None
        if held is not None and held.schema_id is not None:
            ids["key"] = held.schema_id
    return Loaded(ref, contract, ids)


class RegistryIncompatibleError(ConflictError):
    """The registry refused a subject the verdict let through (its own check at write time),
    or the key subject's schema is refused at the contract's level."""

    def __init__(self, subject: str, part: str, messages: Sequence[str]) -> None:
        detail = "; ".join(messages) or "incompatible with the registered schema"
        super().__init__(f"the registry refuses {part}: {detail}", subject)
        self.subject = subject
        self.part = part
        self.messages = list(messages)


class RollbackError(ConflictError):
    """The contract equals an older registered version (not the latest)."""

    def __init__(self, name: str, version: int, latest: int) -> None:
        super().__init__(
            f"contract {name!r} equals version {version}, an older version (the latest is "
            f"{latest}): this is a rollback; send ?rollback=true to register it again as a "
            "new version",
            f"/contracts/{name}",
        )


class RefusedContractError(ConflictError):
    """The gate refuses the contract (:func:`contracts.diff.verdict.contract_verdict`); the
    verdict is kept (as the CLI's JSON)."""

    def __init__(self, verdict: ContractVerdict) -> None:
        super().__init__(verdict.refusal(), f"/contracts/{verdict.name}")
        self.verdict = verdict


@dataclass(frozen=True, slots=True)
class _SubjectState:
    """One wanted subject as the registry holds it, read under the subject's lock."""

    desired: DesiredSubject
    latest: Registered | None
    held: Registered | None  # the version holding exactly this schema and metadata
    own_level: str | None
    history: tuple[tuple[int, Registered], ...]
    #: the level the registry judges the subject at now (its own, else the global one)
    level_in_force: str | None = None

    @property
    def current(self) -> bool:
        """The latest version already is what the contract wants."""
        return (
            self.held is not None
            and self.latest is not None
            and self.held.version == self.latest.version
        )


@dataclass(frozen=True, slots=True)
class PutOutcome:
    """What ``PUT /contracts/{name}`` did: ``changed`` only when a version was created."""

    name: str
    changed: bool
    version: int | None
    subjects: Mapping[str, str] = field(default_factory=dict)
    schema_ids: Mapping[str, int] = field(default_factory=dict)
    #: the findings configured exceptions waived (as ``check`` reports them)
    waived: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "changed": self.changed, "version": self.version}
        if self.changed:
            out["subjects"] = dict(self.subjects)
            out["schema_ids"] = dict(self.schema_ids)
        if self.waived:
            out["waived"] = list(self.waived)
        return out


async def put_through_gate(
    catalog: Catalog,
    contract: Contract,
    *,
    locks: SubjectLocks,
    offload: Offload,
    rollback: bool = False,
    fail_on: FailOn = "breaking",
    exceptions: ExceptionPolicy | None = None,
    default_level: CompatibilityLevel | None = None,
) -> PutOutcome:
    """The one gate of the API: register the contract's subjects if ``check`` would pass it.

    Under the locks of its subjects: a subject whose latest version belongs to another
    contract is refused; a contract equal to the latest version changes nothing; one equal to
    an older version is a rollback, refused unless ``rollback``; otherwise the contract's
    verdict (:func:`registry_sync.sync.judge_subject`, as ``registry plan`` and ``check``
    judge) must pass before anything is written, and the registry's own check at write time
    must too.
    """
    if catalog.registry is None:
        raise ConflictError("this service has no registry to register contracts in")
    try:
        contract = at_level(contract, default_level)
        return await _put(catalog.registry, contract, locks, offload, rollback, fail_on, exceptions)
    finally:
        catalog.invalidate()


async def _put(
    registry: RegistryClient,
    contract: Contract,
    locks: SubjectLocks,
    offload: Offload,
    rollback: bool,
    fail_on: FailOn,
    exceptions: ExceptionPolicy | None,
) -> PutOutcome:
    from registry_sync.desired import PROP_NAME, PROP_RESTORES, desired_subjects

    wanted = await offload.run(desired_subjects, [contract])
    async with locks.hold([w.subject for w in wanted]):
        states = [await _subject_state(registry, item) for item in wanted]
        for state in states:
            owner = _properties(state.latest).get(PROP_NAME)
            if owner and owner != contract.name:
                raise ConflictError(
                    f"subject {state.desired.subject!r} belongs to contract {owner!r}; contract "
                    f"{contract.name!r} cannot take it over (give it another topic)",
                    state.desired.subject,
                )
        value = next(s for s in states if s.desired.part == "value")
        assessed = await offload.run(_assess, states, fail_on, exceptions)
        if assessed.unchanged:
            assert value.latest is not None
            return PutOutcome(contract.name, False, value.latest.version)
        restores = assessed.restores
        if restores is not None and not rollback:
            raise RollbackError(
                contract.name, restores, (value.latest and value.latest.version) or 0
            )
        for state, judgement in zip(states, assessed.judgements, strict=True):
            if judgement.verdict is not None and not judgement.ok:
                raise RefusedContractError(judgement.verdict)
            if not judgement.ok:
                raise RegistryIncompatibleError(
                    state.desired.subject, state.desired.part, judgement.messages
                )
        ids: dict[str, int] = {}
        versions: dict[str, int | None] = {}
        subjects: dict[str, str] = {}
        created = False
        for state in states:
            item = state.desired
            properties = dict(item.properties)
            if restores is not None and item.part == "value":
                properties[PROP_RESTORES] = str(restores)
            if state.own_level != item.level:
                await registry.set_compatibility(item.subject, item.level)
            try:
                done = await registry.register(item.subject, item.schema, properties)
            except RegistryRefusedError as err:
                if err.status == 409:
                    raise RegistryIncompatibleError(item.subject, item.part, [err.what]) from None
                raise
            before = state.latest.version if state.latest is not None else None
            created = created or done.version != before
            ids[item.part], versions[item.part] = done.schema_id or 0, done.version
            subjects[item.part] = item.subject
    waived = tuple(
        w.to_json() for j in assessed.judgements if j.verdict is not None for w in j.verdict.waived
    )
    return PutOutcome(contract.name, created, versions.get("value"), subjects, ids, waived)


async def _subject_state(registry: RegistryClient, item: DesiredSubject) -> _SubjectState:
    latest = await registry.version(item.subject)
    if latest is None:
        return _SubjectState(item, None, None, None, ())
    held = await registry.lookup(item.subject, item.schema, item.properties)
    own_level = await registry.subject_compatibility(item.subject)
    in_force = own_level or await registry.compatibility(None)
    numbers = [latest.version or 0]
    if item.judging_level(in_force).transitive:
        numbers = await registry.versions(item.subject)
    found = await _gather(
        [str(n) for n in numbers],
        lambda n: _same_or_read(registry, item.subject, int(n), latest),
    )
    history = tuple((r.version or 0, r) for r in found if r is not None and r.schema is not None)
    return _SubjectState(item, latest, held, own_level, history, in_force)


async def _same_or_read(
    registry: RegistryClient, subject: str, number: int, latest: Registered
) -> Registered | None:
    if number == latest.version:
        return latest
    return await registry.version(subject, number)


@dataclass(frozen=True, slots=True)
class _Assessment:
    """What the registry's state means for a ``PUT``: nothing to do, a rollback (the older
    version the contract equals), or the judgement of every subject."""

    unchanged: bool
    restores: int | None = None
    judgements: tuple[Judgement, ...] = ()


def _assess(
    states: list[_SubjectState], fail_on: FailOn, exceptions: ExceptionPolicy | None
) -> _Assessment:
    """Assess a ``PUT`` (run in a worker: rendering, parsing and diffing are CPU work).

    A subject is current when its latest version holds exactly the wanted schema and
    metadata, or the wanted schema and the same contract (a version a rollback registered
    again, with its ``cdc.contract.restores`` mark)."""
    from registry_sync.desired import contract_from_properties
    from registry_sync.sync import same_avro

    def current(state: _SubjectState) -> bool:
        if state.current:
            return True
        latest = state.latest
        if latest is None or not same_avro(latest.schema, state.desired.schema):
            return False
        held = contract_from_properties(latest.metadata_properties, state.desired.subject)
        wanted = state.desired.contract
        return state.desired.part == "key" or (
            held is not None and held.to_dict() == wanted.to_dict()
        )

    if all(current(s) for s in states):
        return _Assessment(True)
    value = next(s for s in states if s.desired.part == "value")
    if value.held is not None and value.latest is not None and not current(value):
        restores = value.held.version
    else:
        restores = None
    judgements = tuple(
        judge_subject(s.desired, list(s.history), fail_on, exceptions, s.level_in_force)
        for s in states
    )
    return _Assessment(False, restores, judgements)
