"""Reading contract files for ``diff`` and ``check``: strictly, and fast enough for 500 files.

:func:`load_contract_text` accepts exactly what :func:`contracts.contract.parse_contract`
accepts, and raises its errors (``file:line: key: what``): it composes the YAML once with
libyaml (a memoised tag resolver; most scalars repeat), builds plain data from the node tree and
validates the model. Anything unusual on that path (a YAML error, a duplicate or merge key, a tag
other than the plain JSON-like ones, a validation error) is handed to ``parse_contract``, which
decides and names the file and line. The node tree also gives :class:`LineIndex`, the lines to
annotate, without a second parse.

A contract must also name a registered format (as ``parse_contract`` checks): comparing two
contracts of an unknown format would compare their rows as the value schema and report bogus
changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import yaml
from pydantic import ValidationError

from contracts.contract import MAX_YAML_DEPTH, Contract, parse_contract, remember_source
from contracts.contract import check_format as contract_check_format
from contracts.diff.model import Finding

__all__ = ["LineIndex", "LoadedContract", "check_format", "load_contract_text", "read_contract"]

_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG: Final = "tag:yaml.org,2002:"
_STR: Final = _TAG + "str"
_MAP: Final = _TAG + "map"
_SEQ: Final = _TAG + "seq"
_SC = yaml.constructor.SafeConstructor
_SCALARS: Final[dict[str, Callable[[Any, yaml.ScalarNode], Any]]] = {
    _TAG + "int": _SC.construct_yaml_int,
    _TAG + "float": _SC.construct_yaml_float,
    _TAG + "bool": _SC.construct_yaml_bool,
    _TAG + "null": _SC.construct_yaml_null,
    _TAG + "timestamp": _SC.construct_yaml_timestamp,
}
_MEMO_LIMIT: Final = 100_000
_CONSTRUCTOR: Final = _SC()  # stateless for the scalar constructors used here


class _Loader(_BASE_LOADER):  # type: ignore[misc]
    """The safe loader, with implicit tags memoised (resolving is most of composing)."""

    _memo: dict[tuple[Any, str, Any], str] = {}

    def resolve(self, kind: Any, value: str, implicit: Any) -> str:
        key = (kind, value, implicit)
        tag = self._memo.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = tag
        return tag


class _Unusual(Exception):
    """The fast path does not build this node; the reference loader decides."""


def _build(loader: Any, node: yaml.Node, active: set[int], depth: int = 1) -> Any:
    if depth > MAX_YAML_DEPTH:
        raise _Unusual  # parse_contract refuses it, naming the limit
    if isinstance(node, yaml.ScalarNode):
        if node.tag == _STR:
            return node.value
        make = _SCALARS.get(node.tag)
        if make is None:
            raise _Unusual
        return make(loader, node)
    if id(node) in active:
        # an alias (a node met twice): the reference loader refuses it; building it again at
        # every use would take time exponential in the depth of nested aliases
        raise _Unusual
    active.add(id(node))
    if isinstance(node, yaml.SequenceNode) and node.tag == _SEQ:
        return [_build(loader, item, active, depth + 1) for item in node.value]
    if isinstance(node, yaml.MappingNode) and node.tag == _MAP:
        out: dict[Any, Any] = {}
        for k, v in node.value:
            key = _build(loader, k, active, depth + 1)
            if isinstance(key, list | dict) or key in out:
                raise _Unusual  # unhashable or duplicate key
            out[key] = _build(loader, v, active, depth + 1)
        return out
    raise _Unusual


def _compose(text: str) -> yaml.Node | None:
    loader = _Loader(text)
    try:
        node: yaml.Node | None = loader.get_single_node()
        return node
    finally:
        loader.dispose()


class LineIndex:
    """Lines of a contract file's top-level keys and columns (built once per file)."""

    def __init__(self, node: yaml.Node | None) -> None:
        self.keys: dict[str, int] = {}
        self.columns: dict[str, int] = {}
        if not isinstance(node, yaml.MappingNode):
            return
        for k, v in node.value:
            self.keys[str(k.value)] = k.start_mark.line + 1
            if k.value == "columns" and isinstance(v, yaml.SequenceNode):
                for item in v.value:
                    if isinstance(item, yaml.MappingNode):
                        for ck, cv in item.value:
                            if ck.value == "field" and isinstance(cv, yaml.ScalarNode):
                                self.columns[str(cv.value)] = item.start_mark.line + 1

    @classmethod
    def of_text(cls, text: str) -> LineIndex:
        try:
            return cls(_compose(text))
        except yaml.YAMLError:
            return cls(None)

    def line(self, finding: Finding) -> int | None:
        """The line a finding points at: its column, else the top-level key it concerns."""
        if finding.column and finding.column in self.columns:
            return self.columns[finding.column]
        top = finding.path.split(".", 1)[0]
        return self.keys.get(top) or self.keys.get("columns") or 1


@dataclass(frozen=True, slots=True)
class LoadedContract:
    """A contract read from text, with the lines of its keys and columns."""

    contract: Contract
    lines: LineIndex


def load_contract_text(text: str, source: str) -> LoadedContract:
    """The contract in ``text``; ``source`` (a file name) prefixes every error's location.

    Raises :class:`~contracts.errors.ContractFileError` (``source:line: key: what``) for
    anything that is not a contract of a registered format.
    """
    try:
        node = _compose(text)
    except yaml.YAMLError:
        node = None
    contract: Contract | None = None
    if isinstance(node, yaml.MappingNode):
        try:
            data = _build(_CONSTRUCTOR, node, set())
            contract = Contract.model_validate(data)
        except (_Unusual, ValidationError, RecursionError, ValueError, TypeError):
            contract = None
    lines = LineIndex(node)
    if contract is None:
        contract = parse_contract(text, source)  # raises, naming the line
    else:
        check_format(contract, source, lines)
        remember_source(contract, source)  # as parse_contract does: derive errors name it
    return LoadedContract(contract, lines)


def read_contract(text: str, source: str) -> Contract:
    """The contract in ``text`` (see :func:`load_contract_text`)."""
    return load_contract_text(text, source).contract


def check_format(contract: Contract, source: str, lines: LineIndex | None = None) -> None:
    """:func:`contracts.contract.check_format`, located by a file's :class:`LineIndex`."""
    line = lines.keys.get("format") if lines is not None else None
    contract_check_format(contract, source, line)
