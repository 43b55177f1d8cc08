"""The registry as the baseline of ``cdc-contracts check --against registry``.

:class:`RegistryBaseline` answers, for a contract, every version registered under its value
subject, rebuilt as contracts from the schemas' metadata (oldest first), and the raw Avro texts
for versions registered by other tools (which carry no contract).
"""

from __future__ import annotations

from typing import Any

from contracts.contract import CompatibilityLevel, Contract
from contracts.diff.side import Side
from registry_sync.client import RegistryClient, RegistryConfig
from registry_sync.desired import contract_from_properties, desired_subjects
from registry_sync.naming import SubjectNameStrategy
from registry_sync.sync import registered_side


class RegistryBaseline:
    """Previous versions of contracts, read from a Schema Registry.

    ``auth`` takes :class:`~registry_sync.client.RegistryConfig` fields (``basic_auth``,
    ``bearer_token``, ``ca_location``, ``timeout``, ...).
    """

    def __init__(
        self,
        url: str,
        strategy: SubjectNameStrategy | str = SubjectNameStrategy.TOPIC,
        **auth: Any,
    ) -> None:
        self.client = RegistryClient(RegistryConfig(url=url, **auth))
        self.strategy = strategy

    def close(self) -> None:
        self.client.close()

    def subject(self, contract: Contract, part: str = "value") -> str | None:
        """The subject the contract's ``part`` is registered under (None: no such part)."""
        for item in desired_subjects([contract], self.strategy):
            if item.part == part:
                return item.subject
        return None

    def level(self, contract: Contract) -> CompatibilityLevel | None:
        """The level the registry judges the contract's value subject at (its own, else the
        registry's global level)."""
        subject = self.subject(contract)
        return CompatibilityLevel(self.client.compatibility(subject)) if subject else None

    def previous_avro(self, contract: Contract, part: str = "value") -> list[str]:
        """Every live registered schema text of the subject, oldest first."""
        return [schema for _, schema in self._versions(contract, part)]

    def previous(self, contract: Contract) -> list[Contract]:
        """Every registered version as a contract, oldest first (versions without one skipped)."""
        subject = self.subject(contract)
        out: list[Contract] = []
        for props, _schema in self._versions(contract, "value"):
            found = contract_from_properties(props, subject or contract.name)
            if found is not None:
                out.append(found)
        return out

    def previous_sides(self, contract: Contract) -> list[tuple[int, Side]]:
        """Every version registered under the contract's value subject, oldest first, as the
        version numbers and sides :func:`contracts.diff.catalog.compare_with_history` judges
        against: a version carrying a contract in its metadata (``registry push``) is that
        contract; one registered by another tool is its Avro schema, so it still takes part
        in the verdict."""
        subject = self.subject(contract)
        if subject is None:
            return []
        sides: list[tuple[int, Side]] = []
        for number in self.client.versions(subject):
            got = self.client.version(subject, number)
            if got is not None and got.schema is not None:
                sides.append((number, registered_side(got, subject, number)))
        return sides

    def _versions(self, contract: Contract, part: str) -> list[tuple[Any, str]]:
        subject = self.subject(contract, part)
        if subject is None:
            return []
        out = []
        for number in self.client.versions(subject):
            got = self.client.version(subject, number)
            if got is not None and got.schema is not None:
                out.append((got.metadata_properties, got.schema))
        return out
