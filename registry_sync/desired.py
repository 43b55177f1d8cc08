"""What the registry should hold for a set of contracts: one entry per subject.

Each contract contributes its value subject (and its key subject when it has key columns),
registered as Avro rendered by ``contracts.render.contract_avro``. The contract's identity
travels with every schema as metadata properties, so ``pull`` can rebuild the contract file
exactly and ``plan`` can tell an identity change from a schema change:

===========================  ====================================================
property                     value
===========================  ====================================================
``cdc.contract.name``        the contract name
``cdc.contract.format``      the producer's CDC format
``cdc.contract.table``       ``database.schema.table`` (empty parts left out)
``cdc.contract.part``        ``key`` or ``value``
``cdc.contract.owner``       the owner (value subject, when set)
``cdc.contract``             the whole contract as compact JSON (value subject)
``cdc.contract.restores``    the version a rollback registered again (value subject)
===========================  ====================================================
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from contracts.contract import CompatibilityLevel, Contract, load_contract
from contracts.diff.levels import judging_level
from contracts.errors import ContractFileError, ContractsError
from registry_sync.naming import SubjectNameStrategy, subject_for

PROP_PREFIX: Final = "cdc.contract"
PROP_CONTRACT: Final = "cdc.contract"
PROP_NAME: Final = "cdc.contract.name"
PROP_FORMAT: Final = "cdc.contract.format"
PROP_TABLE: Final = "cdc.contract.table"
PROP_OWNER: Final = "cdc.contract.owner"
PROP_PART: Final = "cdc.contract.part"
#: on a version registered again as a rollback (``PUT ...?rollback=true``): the version it restores
PROP_RESTORES: Final = "cdc.contract.restores"
CONTRACT_SUFFIXES: Final = (".yaml", ".yml")


@dataclass(frozen=True, slots=True)
class DesiredSubject:
    """One subject as the contracts want it."""

    subject: str
    contract: Contract
    part: str
    schema: str  # Avro, compact JSON text
    properties: dict[str, str]

    @property
    def level(self) -> str:
        return self.contract.compatibility.value

    def judging_level(self, held: str | None) -> CompatibilityLevel:
        """The level a new version is judged at while the subject is ``held`` at a level
        (:func:`contracts.diff.levels.judging_level`; None: the subject is new)."""
        old = CompatibilityLevel(held) if held is not None else None
        return judging_level(old, self.contract.compatibility)


def identity_properties(contract: Contract, part: str) -> dict[str, str]:
    """The metadata properties carrying a contract's identity (see the module table).

    The key subject carries only the stable identity (name, format, table, part), so that
    editing a contract's description or columns never adds a needless key version; the value
    subject also carries the owner and the whole contract.
    """
    table = contract.table
    dotted = ".".join(p for p in (table.database, table.schema_, table.name) if p)
    props = {
        PROP_NAME: contract.name,
        PROP_FORMAT: contract.format,
        PROP_TABLE: dotted,
        PROP_PART: part,
    }
    if part == "value":
        if contract.owner:
            props[PROP_OWNER] = contract.owner
        props[PROP_CONTRACT] = contract_json(contract)
    return props


def contract_json(contract: Contract) -> str:
    """The contract as compact JSON in file order (key order matters: Connect parameters)."""
    return json.dumps(contract.to_dict(), separators=(",", ":"), ensure_ascii=False)


def contract_from_properties(properties: dict[str, str] | None, where: str) -> Contract | None:
    """The contract carried by a schema's metadata, or None when it carries none."""
    if not properties or PROP_CONTRACT not in properties:
        return None
    try:
        data = json.loads(properties[PROP_CONTRACT])
        return Contract.model_validate(data)
    except (ValueError, TypeError) as err:
        reason = " ".join(str(err).split())[:300]
        raise ContractFileError(
            f"the registered contract metadata is invalid: {reason}", where
        ) from None


def render_avro(contract: Contract, part: Literal["key", "value"]) -> dict[str, Any] | None:
    """The contract's key or value Avro schema (None when the contract has no key)."""
    from contracts.render import contract_avro

    rendered = contract_avro(contract, part)
    if rendered is None:
        return None
    if isinstance(rendered, str):
        parsed: dict[str, Any] = json.loads(rendered)
        return parsed
    return dict(rendered)


def avro_text(schema: Any) -> str:
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def record_name(schema: Any) -> str | None:
    """The full name of an Avro record schema (``namespace.name``), if it is a record."""
    if not isinstance(schema, dict) or "name" not in schema:
        return None
    name = str(schema["name"])
    namespace = schema.get("namespace")
    return name if "." in name or not namespace else f"{namespace}.{name}"


def at_level(contract: Contract, default_level: CompatibilityLevel | None) -> Contract:
    """The contract with the project's default level when it sets no ``compatibility:`` of
    its own (that level is registered with it, and it is judged at it)."""
    from contracts.diff.engine import effective_level

    level = effective_level(contract, None, default_level)
    if level is contract.compatibility:
        return contract
    return contract.model_copy(update={"compatibility": level})


def desired_subjects(
    contracts: Iterable[Contract],
    strategy: SubjectNameStrategy | str = SubjectNameStrategy.TOPIC,
    default_level: CompatibilityLevel | None = None,
) -> list[DesiredSubject]:
    """Every subject the contracts want, in contract order (value before key);
    ``default_level`` is the project's level for contracts that set none (:func:`at_level`)."""
    out: list[DesiredSubject] = []
    owners: dict[str, str] = {}
    for contract in (at_level(c, default_level) for c in contracts):
        topic = contract.kafka_topic
        parts: tuple[Literal["value", "key"], ...] = ("value", "key")
        for part in parts:
            schema = render_avro(contract, part)
            if schema is None:
                continue
            subject = subject_for(topic, part, strategy, record_name(schema))
            if subject in owners and owners[subject] != contract.name:
                raise ContractsError(
                    f"contracts {owners[subject]!r} and {contract.name!r} both map to subject "
                    f"{subject!r}; give them distinct topics or another naming strategy"
                )
            owners[subject] = contract.name
            out.append(
                DesiredSubject(
                    subject=subject,
                    contract=contract,
                    part=part,
                    schema=avro_text(schema),
                    properties=identity_properties(contract, part),
                )
            )
    return out


def contract_paths(source: Path) -> list[Path]:
    """Contract files: ``source`` itself, or every ``*.yaml``/``*.yml`` under it, sorted (the
    project configuration, ``cdc-contracts.yaml``, is no contract)."""
    from contracts.config import CONFIG_NAME

    if source.is_file():
        return [source]
    if not source.is_dir():
        raise ContractFileError("no such contract file or directory", str(source))
    return sorted(
        p
        for p in source.rglob("*")
        if p.suffix in CONTRACT_SUFFIXES and p.is_file() and p.name != CONFIG_NAME
    )


def load_contracts(source: Path) -> list[Contract]:
    """Load and validate every contract under ``source``; duplicate names are refused."""
    contracts: list[Contract] = []
    seen: dict[str, Path] = {}
    for path in contract_paths(source):
        contract = load_contract(path)
        if contract.name in seen:
            raise ContractFileError(
                f"contract name {contract.name!r} is also used by {seen[contract.name]}", str(path)
            )
        seen[contract.name] = path
        contracts.append(contract)
    return contracts
