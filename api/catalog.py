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
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypeVar, cast

import httpx
import orjson

from contracts.contract import Contract, load_contract, validate_name
from contracts.errors import ConflictError, ContractsError, NotFoundError

log = logging.getLogger("cdc_contracts.api")
T = TypeVar("T")

Source = Literal["registry", "directory"]
CONTRACT_SUFFIXES: Final = (".yaml", ".yml", ".json")
RENDER_TARGETS: Final = ("connect", "avro", "spark-json", "spark-ddl")
PARTS: Final = ("key", "value", "row")


class RegistryUnavailableError(ContractsError):
    """The Schema Registry could not be reached or answered with a server error."""

    exit_code = 1
    http_status = 502


class RegistryRefusedError(ContractsError):
    """The Schema Registry refused a request (its error code and message are kept)."""

    def __init__(self, what: str, where: str | None, status: int, error_code: int | None) -> None:
        super().__init__(what, where)
        self.http_status = status if 400 <= status < 500 else 502
        self.error_code = error_code


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


# --- the registry, over its REST protocol -----------------------------------------------------


class RegistryClient:
    """A thin async client of a Confluent-compatible Schema Registry."""

    def __init__(self, client: httpx.AsyncClient, label: str) -> None:
        self._client = client
        self.label = label

    async def request(
        self, method: str, path: str, *, body: Any = None, missing_ok: bool = False
    ) -> Any:
        """One call; registry refusals become :class:`RegistryRefusedError`."""
        try:
            response = await self._client.request(
                method,
                path,
                content=orjson.dumps(body) if body is not None else None,
                headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
            )
        except httpx.HTTPError as err:
            raise RegistryUnavailableError(
                f"the Schema Registry did not answer: {type(err).__name__}", self.label
            ) from None
        if missing_ok and response.status_code == 404:
            return None
        if response.status_code >= 500:
            raise RegistryUnavailableError(
                f"the Schema Registry answered {response.status_code} to {method} {path}",
                self.label,
            )
        payload = _json_or_text(response)
        if response.status_code >= 400:
            code = payload.get("error_code") if isinstance(payload, dict) else None
            message = payload.get("message") if isinstance(payload, dict) else str(payload)
            raise RegistryRefusedError(
                f"the Schema Registry refused {method} {path}: {message}",
                self.label,
                response.status_code,
                code if isinstance(code, int) else None,
            )
        return payload

    async def subjects(self) -> list[str]:
        found = await self.request("GET", "/subjects")
        return [s for s in found if isinstance(s, str)] if isinstance(found, list) else []

    async def versions(self, subject: str) -> list[int]:
        found = await self.request("GET", f"/subjects/{_q(subject)}/versions", missing_ok=True)
        return sorted(v for v in found or [] if isinstance(v, int))

    async def version(self, subject: str, version: int | str) -> dict[str, Any] | None:
        found = await self.request(
            "GET", f"/subjects/{_q(subject)}/versions/{version}", missing_ok=True
        )
        return found if isinstance(found, dict) else None

    async def register(
        self, subject: str, schema: str, metadata: Mapping[str, str]
    ) -> tuple[int, int | None]:
        """Register a schema; answers its id and the version the registry assigned (registries
        that answer only the id are asked for the version with a lookup)."""
        body = _schema_body(schema, metadata)
        found = await self.request("POST", f"/subjects/{_q(subject)}/versions", body=body)
        found = found if isinstance(found, dict) else {}
        version = found.get("version")
        if not isinstance(version, int):
            looked_up = await self.lookup(subject, schema, metadata)
            version = looked_up.get("version") if looked_up else None
        return int(found.get("id", 0)), version if isinstance(version, int) else None

    async def lookup(
        self, subject: str, schema: str, metadata: Mapping[str, str]
    ) -> dict[str, Any] | None:
        """The version of ``subject`` holding this schema (and metadata), or None."""
        body = _schema_body(schema, metadata)
        found = await self.request("POST", f"/subjects/{_q(subject)}", body=body, missing_ok=True)
        return found if isinstance(found, dict) else None

    async def is_compatible(self, subject: str, schema: str) -> tuple[bool, list[str]]:
        """The registry's own verdict for ``schema`` against ``subject`` (True when new)."""
        body = {"schema": schema, "schemaType": "AVRO"}
        found = await self.request(
            "POST",
            f"/compatibility/subjects/{_q(subject)}/versions?verbose=true",
            body=body,
            missing_ok=True,
        )
        if not isinstance(found, dict):
            return True, []
        messages = found.get("messages") or []
        return bool(found.get("is_compatible", True)), [str(m) for m in messages]

    async def compatibility(self, subject: str, default_to_global: bool = True) -> str | None:
        flag = "true" if default_to_global else "false"
        found = await self.request(
            "GET", f"/config/{_q(subject)}?defaultToGlobal={flag}", missing_ok=True
        )
        if isinstance(found, dict):
            level = found.get("compatibilityLevel") or found.get("compatibility")
            return str(level) if level else None
        return None

    async def aclose(self) -> None:
        await self._client.aclose()


def _schema_body(schema: str, metadata: Mapping[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = {"schema": schema, "schemaType": "AVRO"}
    if metadata:
        body["metadata"] = {"properties": dict(metadata)}
    return body


def _q(subject: str) -> str:
    return httpx.URL("/" + subject).raw_path.decode("ascii").lstrip("/").replace("/", "%2F")


def _json_or_text(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


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

    async def register(self, contract: Contract) -> dict[str, Any]:
        """Register the contract's key and value schemas with its metadata."""
        if self.registry is None:
            raise ConflictError("this service has no registry to register contracts in")
        try:
            outcome = await register_contract(self.registry, contract)
        finally:
            self.invalidate()
        return outcome


# --- contracts in the registry ------------------------------------------------------------------
# Contracts travel as schema metadata the way ``registry_sync`` pushes them (registry_sync.desired):
# every key and value subject carries ``cdc.contract.*`` identity properties and the whole
# contract as JSON, so a value subject's versions are the contract's versions.


def _properties(registered: Mapping[str, Any] | None) -> dict[str, str]:
    if not registered:
        return {}
    metadata = registered.get("metadata")
    props = metadata.get("properties") if isinstance(metadata, dict) else None
    return {str(k): str(v) for k, v in props.items()} if isinstance(props, dict) else {}


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
            latest[contract.name] = (contract, int(found.get("version") or 0))

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
    ids = {"value": int(found.get("id", 0))}
    key_subject = ref.subjects.get("key")
    if key_subject is not None:
        from registry_sync.desired import desired_subjects

        key = next((d for d in desired_subjects([contract]) if d.part == "key"), None)
        held = await registry.lookup(key_subject, key.schema, key.properties) if key else None
        if held is not None and isinstance(held.get("id"), int):
            ids["key"] = held["id"]
    return Loaded(ref, contract, ids)


class RegistryIncompatibleError(ConflictError):
    """The registry (or the verdict at the contract's new level) refuses one of the subjects."""

    def __init__(self, subject: str, part: str, messages: list[str]) -> None:
        detail = "; ".join(messages) or "incompatible with the registered schema"
        super().__init__(f"the registry refuses {part}: {detail}", subject)
        self.subject = subject
        self.part = part
        self.messages = messages


async def register_contract(registry: RegistryClient, contract: Contract) -> dict[str, Any]:
    """Register the contract's subjects as ``registry_sync`` would: check all, then write.

    A subject whose latest version belongs to another contract is refused (409). Every subject
    is checked before anything is written, so a refusal leaves nothing half-applied: by the
    registry's own compatibility endpoint, or, when the contract changes the subject's level,
    by the registry's verdict computed here at the *new* level (as ``registry plan`` does).
    The answer names the versions the registry assigned.
    """
    from registry_sync.desired import PROP_NAME, desired_subjects

    wanted = desired_subjects([contract])
    levels: dict[str, str | None] = {}
    for item in wanted:
        latest = await registry.version(item.subject, "latest")
        owner = _properties(latest).get(PROP_NAME)
        if owner and owner != contract.name:
            raise ConflictError(
                f"subject {item.subject!r} belongs to contract {owner!r}; contract "
                f"{contract.name!r} cannot take it over (give it another topic)",
                item.subject,
            )
        levels[item.subject] = await registry.compatibility(item.subject, default_to_global=False)
        if latest is None:
            continue  # a new subject: nothing to be compatible with
        if levels[item.subject] == item.level:
            ok, reasons = await registry.is_compatible(item.subject, item.schema)
        else:
            ok, reasons = await _verdict_at_level(registry, item.subject, item.schema, item.level)
        if not ok:
            raise RegistryIncompatibleError(item.subject, item.part, reasons)
    ids: dict[str, int] = {}
    versions: dict[str, int | None] = {}
    subjects: dict[str, str] = {}
    for item in wanted:
        if levels[item.subject] != item.level:
            await registry.request(
                "PUT", f"/config/{_q(item.subject)}", body={"compatibility": item.level}
            )
        try:
            ids[item.part], versions[item.part] = await registry.register(
                item.subject, item.schema, item.properties
            )
        except RegistryRefusedError as err:
            if err.http_status == 409:
                raise RegistryIncompatibleError(item.subject, item.part, [err.what]) from None
            raise
        subjects[item.part] = item.subject
    return {"version": versions.get("value"), "subjects": subjects, "schema_ids": ids}


async def _verdict_at_level(
    registry: RegistryClient, subject: str, schema: str, level: str
) -> tuple[bool, list[str]]:
    """The registry's verdict for ``schema`` after the subject, at ``level``: against every
    live version for transitive levels, against the latest otherwise."""
    from contracts.contract import CompatibilityLevel
    from contracts.diff.verdict import schema_verdict

    numbers = await registry.versions(subject)
    if not CompatibilityLevel(level).transitive:
        numbers = numbers[-1:]
    found = await _gather([str(n) for n in numbers], lambda n: registry.version(subject, n))
    previous = [
        (f["version"], f["schema"]) for f in found if f and isinstance(f.get("schema"), str)
    ]
    verdict = schema_verdict(schema, previous, level)
    return verdict.compatible, list(verdict.messages)
