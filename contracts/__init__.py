"""cdc-contracts core: Connect schemas, logical types, translations, formats, contracts and diffs.

This package is pure Python: it imports no pyspark, no fastapi and no network client. The names
below are its public API; each is imported on first use, so ``import contracts`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

from contracts.errors import ContractsError

if TYPE_CHECKING:
    from contracts.contract import (
        CompatibilityLevel,
        Contract,
        dump_contract,
        load_contract,
        parse_contract,
    )
    from contracts.diff import DiffResult, Finding, Severity, diff_contracts, registry_verdict
    from contracts.events import ChangeEvent, ControlRecord, TableId
    from contracts.formats import detect_format, format_names, get_format
    from contracts.formats.base import Format, Message, Violation
    from contracts.render import render_contract, render_schema
    from contracts.schema import ConnectSchema, parse_connect

__version__ = "0.1.0"

#: public name → the module that defines it
_PUBLIC: Final[dict[str, str]] = {
    "CompatibilityLevel": "contracts.contract",
    "Contract": "contracts.contract",
    "dump_contract": "contracts.contract",
    "load_contract": "contracts.contract",
    "parse_contract": "contracts.contract",
    "DiffResult": "contracts.diff",
    "Finding": "contracts.diff",
    "Severity": "contracts.diff",
    "diff_contracts": "contracts.diff",
    "registry_verdict": "contracts.diff",
    "ChangeEvent": "contracts.events",
    "ControlRecord": "contracts.events",
    "TableId": "contracts.events",
    "detect_format": "contracts.formats",
    "format_names": "contracts.formats",
    "get_format": "contracts.formats",
    "Format": "contracts.formats.base",
    "Message": "contracts.formats.base",
    "Violation": "contracts.formats.base",
    "render_contract": "contracts.render",
    "render_schema": "contracts.render",
    "ConnectSchema": "contracts.schema",
    "parse_connect": "contracts.schema",
}

__all__ = [
    "ChangeEvent",
    "CompatibilityLevel",
    "ConnectSchema",
    "Contract",
    "ContractsError",
    "ControlRecord",
    "DiffResult",
    "Finding",
    "Format",
    "Message",
    "Severity",
    "TableId",
    "Violation",
    "detect_format",
    "diff_contracts",
    "dump_contract",
    "format_names",
    "get_format",
    "load_contract",
    "parse_connect",
    "parse_contract",
    "registry_verdict",
    "render_contract",
    "render_schema",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'contracts' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
