"""The contract file: one human-readable YAML document per table/topic.

A :class:`Contract` names the table and the producer's format, lists the key columns and the
columns (the Connect row schema), and carries the compatibility level, the format's options,
the owner and a description. :func:`load_contract` validates a file and reports problems with
their line; :func:`dump_contract` writes one with a stable key order and layout, so that pull
request diffs read well (one line per simple column).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from contracts.errors import ContractFileError, ContractsError, SchemaError, UnknownFormatError
from contracts.events import TableId
from contracts.logical import DECIMAL_NAME, PRECISION_PARAM
from contracts.schema import ConnectSchema, parse_connect, struct
from contracts.translate.avro import check_default

NAME_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,199}$"
_NAME_RE: Final = re.compile(NAME_PATTERN)


class CompatibilityLevel(enum.StrEnum):
    """Schema Registry compatibility levels."""

    BACKWARD = "BACKWARD"
    BACKWARD_TRANSITIVE = "BACKWARD_TRANSITIVE"
    FORWARD = "FORWARD"
    FORWARD_TRANSITIVE = "FORWARD_TRANSITIVE"
    FULL = "FULL"
    FULL_TRANSITIVE = "FULL_TRANSITIVE"
    NONE = "NONE"

    @property
    def transitive(self) -> bool:
        return self.value.endswith("_TRANSITIVE")

    @property
    def checks_backward(self) -> bool:
        return self.value.startswith(("BACKWARD", "FULL"))

    @property
    def checks_forward(self) -> bool:
        return self.value.startswith(("FORWARD", "FULL"))


class _Origin:
    """Where a contract was read from: not part of the contract (two contracts with the same
    content are equal whichever files they came from), so every origin equals every other."""

    __slots__ = ("path",)

    def __init__(self, path: str | None = None) -> None:
        self.path = path

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Origin)

    def __hash__(self) -> int:
        return 0


class TableRef(BaseModel):
    """Where the rows come from: database (or catalog), schema and table name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    database: str | None = None
    schema_: str | None = Field(default=None, alias="schema")
    name: str

    def to_id(self) -> TableId:
        return TableId(self.database, self.schema_, self.name)


class Contract(BaseModel):
    """A CDC contract. Field order here is the order in the YAML file."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    name: str = Field(pattern=NAME_PATTERN)
    format: str
    topic: str | None = None
    description: str | None = None
    owner: str | None = None
    table: TableRef
    key: tuple[str, ...] = ()
    compatibility: CompatibilityLevel = CompatibilityLevel.BACKWARD
    options: dict[str, Any] = Field(default_factory=dict)
    columns: tuple[dict[str, Any], ...]

    _row: ConnectSchema = PrivateAttr()
    _origin: _Origin = PrivateAttr(default_factory=lambda: _Origin())

    @field_validator("columns")
    @classmethod
    def _columns_parse(cls, columns: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
        if not columns:
            raise ValueError("a contract needs at least one column")
        return columns

    def model_post_init(self, _context: Any) -> None:
        fields = []
        seen: set[str] = set()
        for i, col in enumerate(self.columns):
            try:
                parsed = parse_connect(col, f"columns[{i}]")
            except SchemaError as err:
                raise ValueError(err.one_line()) from None
            if not parsed.field:
                raise ValueError(f"columns[{i}] needs 'field' (the column name)")
            try:
                check_column(parsed, f"columns[{i}]")
            except SchemaError as err:
                raise ValueError(err.one_line()) from None
            if parsed.field in seen:
                raise ValueError(f"columns[{i}]: duplicate column {parsed.field!r}")
            seen.add(parsed.field)
            fields.append(parsed)
        missing = [k for k in self.key if k not in seen]
        if missing:
            raise ValueError(f"key column(s) {', '.join(missing)} are not among the columns")
        self._row = struct(fields, name=self.row_name, optional=False)

    # --- derived views ------------------------------------------------------------------------

    @property
    def row_name(self) -> str | None:
        """The Connect name of the row struct (``options.row_name``), if the format names it."""
        value = self.options.get("row_name")
        return str(value) if value is not None else None

    @property
    def kafka_topic(self) -> str:
        """The topic the contract's messages are on: ``topic``, else its name (the subjects
        are named after it)."""
        return self.topic or self.name

    @property
    def row_schema(self) -> ConnectSchema:
        """The row as a Connect struct (the columns, in order)."""
        return self._row

    @property
    def key_schema(self) -> ConnectSchema | None:
        """The key columns as a Connect struct, or None when the table has no key."""
        if not self.key:
            return None
        fields = [self._row.require_field(k) for k in self.key]
        key_name = self.options.get("key_name")
        return struct(fields, name=str(key_name) if key_name is not None else None)

    @property
    def table_id(self) -> TableId:
        return self.table.to_id()

    def option(self, key: str, fallback: Any = None) -> Any:
        """A format option, or ``fallback``."""
        return self.options.get(key, fallback)

    @property
    def source(self) -> str | None:
        """The file the contract was read from (None when built in memory)."""
        return self._origin.path

    def where(self, key: str) -> str:
        """A location for an error about ``key`` (``options.source``): with the file, when the
        contract was read from one."""
        return f"{self.source}: {key}" if self.source else key

    def with_columns(self, columns: list[ConnectSchema]) -> Contract:
        """A copy with new columns (Connect field schemas)."""
        data = self.to_dict()
        data["columns"] = [c.to_json() for c in columns]
        return Contract.model_validate(data)

    def to_dict(self) -> dict[str, Any]:
        """The contract as plain data, in file order, without empty optional keys."""
        raw = self.model_dump(mode="json", by_alias=True)
        out: dict[str, Any] = {}
        for key in _FILE_ORDER:
            value = raw.get(key)
            if key in ("name", "format", "table", "columns") or value not in (None, [], {}, ()):
                out[key] = value
        out["table"] = {k: v for k, v in out["table"].items() if v is not None or k == "name"}
        out["columns"] = [_ordered_column(c) for c in self.columns]
        return out


_FILE_ORDER: Final = (
    "name",
    "format",
    "topic",
    "description",
    "owner",
    "table",
    "key",
    "compatibility",
    "options",
    "columns",
)

_COLUMN_ORDER: Final = (
    "field",
    "type",
    "optional",
    "name",
    "version",
    "parameters",
    "default",
    "doc",
    "fields",
    "items",
    "keys",
    "values",
)


def _ordered_column(col: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in _COLUMN_ORDER:
        if key not in col:
            continue
        value = col[key]
        if key == "fields":
            value = [_ordered_column(c) for c in value]
        elif key in ("items", "keys", "values") and isinstance(value, dict):
            value = _ordered_column(value)
        out[key] = value
    return out


def contract_from_schema(
    *,
    name: str,
    format: str,
    table: TableId,
    row: ConnectSchema,
    key: list[str] | tuple[str, ...] = (),
    topic: str | None = None,
    options: Mapping[str, Any] | None = None,
    description: str | None = None,
    owner: str | None = None,
    compatibility: CompatibilityLevel = CompatibilityLevel.BACKWARD,
) -> Contract:
    """Build a contract from a Connect row struct."""
    opts = dict(options or {})
    if row.name and "row_name" not in opts:
        opts["row_name"] = row.name
    data = {
        "name": name,
        "format": format,
        "topic": topic,
        "description": description,
        "owner": owner,
        "table": {"database": table.database, "schema": table.schema, "name": table.name or name},
        "key": list(key),
        "compatibility": compatibility,
        "options": opts,
        "columns": [_ordered_column(f.to_json()) for f in row.fields or ()],
    }
    try:
        return Contract.model_validate(data)
    except ValidationError as err:  # e.g. a column name no contract may have
        first = err.errors()[0]
        what = str(first["msg"]).removeprefix("Value error, ")
        raise SchemaError(f"the samples make no valid contract: {what}", "input") from None


def check_column(schema: ConnectSchema, path: str) -> None:
    """What a contract column must hold beyond its Connect syntax, so that every rendering and
    decoder can rely on it: named struct fields, a Decimal's integer ``scale`` (and positive
    integer precision, when given), and defaults that fit their type."""
    if schema.name == DECIMAL_NAME:
        _check_decimal(schema, path)
    check_default(schema, f"{path}.default")
    for i, child in enumerate(schema.fields or ()):
        if not child.field:
            raise SchemaError(
                "a struct field needs a non-empty 'field' name", f"{path}.fields[{i}]"
            )
        check_column(child, f"{path}.fields[{i}]")
    parts = (("items", schema.items), ("keys", schema.keys), ("values", schema.values))
    for part, inner in parts:
        if inner is not None:
            check_column(inner, f"{path}.{part}")


def _check_decimal(schema: ConnectSchema, path: str) -> None:
    """A Connect Decimal needs an integer ``scale`` (Connect refuses one without it; negative
    scales, as Oracle's NUMBER(p,-s), are valid) and, when given, a positive precision."""
    where = f"{path}.parameters"
    scale = schema.parameter("scale")
    if scale is None:
        raise SchemaError(f"{DECIMAL_NAME} needs a 'scale' parameter", where)
    if not re.fullmatch(r"-?[0-9]+", scale):
        raise SchemaError(f"scale {scale!r} is not an integer", f"{where}.scale")
    precision = schema.parameter(PRECISION_PARAM)
    if precision is not None and not (precision.isdigit() and int(precision) > 0):
        raise SchemaError(
            f"precision {precision!r} is not a positive integer", f"{where}.{PRECISION_PARAM}"
        )


# --- reading ----------------------------------------------------------------------------------


def load_contract(path: str | Path) -> Contract:
    """Read and validate a contract file; errors name the file, line and key."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ContractFileError("no such contract file", str(p)) from None
    except IsADirectoryError:
        raise ContractFileError("is a directory, not a contract file", str(p)) from None
    except UnicodeDecodeError:
        raise ContractFileError("contract file is not UTF-8 text", str(p)) from None
    except OSError as err:  # e.g. permission denied
        raise ContractFileError(f"cannot be read: {err.strerror or err}", str(p)) from None
    return parse_contract(text, str(p))


#: How deeply a contract file may nest mappings and lists. A contract inferred from the deepest
#: message the readers accept (contracts.jsondoc.MAX_JSON_DEPTH) stays well inside it, and the
#: YAML reader, the model and every rendering stay well inside Python's recursion limit.
MAX_YAML_DEPTH: Final = 200


def parse_contract(text: str, source: str = "<contract>") -> Contract:
    """Validate a contract from YAML (or JSON) text; ``source`` names it in errors."""
    contract, node = parse_yaml_model(text, source, Contract)
    check_format(contract, source, line_of(node, ("format",)))
    remember_source(contract, source)
    return contract


M = TypeVar("M", bound=BaseModel)


def parse_yaml_model(
    text: str,
    source: str,
    model: type[M],
    error: type[ContractsError] = ContractFileError,
    kind: str = "contract file",
) -> tuple[M, yaml.Node | None]:
    """Validate a YAML document a person writes (a contract, the project configuration) as
    ``model``; every problem is one ``error`` located at ``source:line`` with the key's path.

    Refused before the model sees the data: invalid YAML, a key given twice, an alias, a date
    that does not exist. Returns the model and the composed node tree (for later lines).
    """
    loader = _SAFE_LOADER(text)
    try:
        node = loader.get_single_node()
        _check_nodes(node, source, set(), error, kind)  # before building: aliases multiply work
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        if "maximum nesting depth" in problem:  # libyaml's own limit (1,000), beyond ours
            problem = f"nested deeper than {MAX_YAML_DEPTH} levels"
        raise error(f"invalid YAML: {problem}", f"{source}{line}") from None
    except RecursionError:  # the pure-Python composer (no libyaml) on a very deep document
        raise error(f"invalid YAML: nested deeper than {MAX_YAML_DEPTH} levels", source) from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise error(f"a {kind} must be a YAML mapping", f"{source}:1")
    try:
        return model.model_validate(data), node
    except ValidationError as err:
        raise _validation_error(err, node, source, error) from None


def _validation_error(
    err: ValidationError, node: yaml.Node | None, source: str, error: type[ContractsError]
) -> ContractsError:
    """The first validation problem as ``source:line: dotted.key: what``."""
    first = err.errors()[0]
    loc: tuple[str | int, ...] = tuple(first["loc"])
    msg = str(first["msg"]).removeprefix("Value error, ")  # pydantic's wording, not ours
    column = re.search(r"columns\[(\d+)\]", msg)
    if not loc and column:
        loc = ("columns", int(column.group(1)))
    elif not loc and msg.startswith("key column"):
        loc = ("key",)
    if loc and re.match(r"columns\[\d+\]: ", msg):  # named by the location already
        msg = msg.split(": ", 1)[1]
    lineno = line_of(node, loc)
    where = f"{source}:{lineno}" if lineno else source
    dotted = ".".join(str(p) for p in loc)
    if first["type"] == "extra_forbidden":
        msg = f"unknown key {loc[-1]!r}"
    elif first["type"] == "missing":
        msg = f"missing required key {loc[-1]!r}"
    return error(f"{dotted}: {msg}" if dotted else msg, where)


def remember_source(contract: Contract, source: str) -> None:
    """Record the file ``contract`` was read from (its derive errors name it)."""
    contract._origin = _Origin(source)


def check_format(contract: Contract, source: str, line: int | None = None) -> None:
    """Refuse a contract whose format is not registered, at its ``format:`` line (a typo would
    otherwise surface only when a command needs the format, or as a bogus diff finding)."""
    from contracts.formats import check_format_name

    try:
        check_format_name(contract.format)
    except UnknownFormatError as err:
        where = f"{source}:{line}" if line else source
        raise ContractFileError(f"format: {err.what}", where) from None


def _check_nodes(
    node: yaml.Node | None,
    source: str,
    met: set[int],
    error: type[ContractsError] = ContractFileError,
    kind: str = "contract file",
    depth: int = 1,
) -> None:
    """Refuse a document nested deeper than :data:`MAX_YAML_DEPTH`, a key given twice in one
    mapping (YAML keeps the last one without a word), an alias (a collection met twice: the
    file is a tree, and nested aliases would make every walk of it exponential: a 500-byte
    file, minutes) and a date that does not exist (the YAML library raises a bare ValueError
    for ``2026-13-01``)."""
    if isinstance(node, yaml.ScalarNode) and node.tag == _TIMESTAMP:
        try:
            _TIMESTAMPS.construct_yaml_timestamp(node)
        except ValueError as err:
            raise error(
                f"{node.value!r} is not a date: {err}", f"{source}:{node.start_mark.line + 1}"
            ) from None
    if not isinstance(node, yaml.MappingNode | yaml.SequenceNode):
        return
    where = f"{source}:{node.start_mark.line + 1}"
    if depth > MAX_YAML_DEPTH:
        raise error(f"invalid YAML: nested deeper than {MAX_YAML_DEPTH} levels", where)
    if id(node) in met:
        raise error(f"YAML aliases are not allowed in a {kind}", where)
    met.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _check_nodes(item, source, met, error, kind, depth + 1)
        return
    seen: dict[str, int] = {}
    for key, value in node.value:
        line = key.start_mark.line + 1
        if isinstance(key, yaml.ScalarNode) and key.value in seen:
            raise error(
                f"duplicate key {key.value!r} (first given at line {seen[key.value]})",
                f"{source}:{line}",
            )
        if isinstance(key, yaml.ScalarNode):
            seen[key.value] = line
        _check_nodes(value, source, met, error, kind, depth + 1)


_TIMESTAMP: Final = "tag:yaml.org,2002:timestamp"
#: The safe loader, composed once per document (libyaml's when installed).
_SAFE_LOADER: Final[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMPS: Final = yaml.constructor.SafeConstructor()


def line_of(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the YAML node at ``loc`` (or of its nearest existing parent)."""
    if node is None:
        return None
    best = node.start_mark.line + 1
    current: yaml.Node = node
    for part in loc:
        if isinstance(current, yaml.MappingNode):
            found = None
            for k, v in current.value:
                if k.value == str(part) or (part == "schema_" and k.value == "schema"):
                    found = (k, v)
                    break
            if found is None:
                break
            best = found[0].start_mark.line + 1
            current = found[1]
        elif isinstance(current, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(current.value):
                break
            current = current.value[part]
            best = current.start_mark.line + 1
        else:
            break
    return best


def field_line(path: str | Path, column: str) -> int | None:
    """The line where column ``column`` is declared in a contract file (for annotations)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError):
        return None
    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in node.value:
        if k.value == "columns" and isinstance(v, yaml.SequenceNode):
            for item in v.value:
                if isinstance(item, yaml.MappingNode):
                    for ck, cv in item.value:
                        if ck.value == "field" and cv.value == column:
                            return int(item.start_mark.line) + 1
    return None


# --- writing ----------------------------------------------------------------------------------


def dump_contract(contract: Contract) -> str:
    """The contract as YAML with a stable key order and one line per simple column."""
    data = contract.to_dict()
    lines: list[str] = []
    for key, value in data.items():
        if key == "columns":
            lines.append("columns:")
            for col in value:
                lines.extend(_column_lines(col, indent=2))
        elif isinstance(value, dict):
            lines.append(f"{key}:")
            lines.extend(_block(value, 2))
        elif isinstance(value, list):
            lines.append(f"{key}: {_flow(value)}")
        elif key == "description" and isinstance(value, str) and "\n" in value:
            lines.append(f"{key}: |" if value.endswith("\n") else f"{key}: |-")
            lines.extend(f"  {ln}" for ln in value.splitlines())
        else:
            lines.append(f"{key}: {_flow(value)}")
    return "\n".join(lines) + "\n"


_FLOW_WIDTH: Final = 100


def _block(value: Any, indent: int) -> list[str]:
    """Block YAML for nested option values: short members stay on one flow line each."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            flow = _flow(v)
            if not isinstance(v, dict | list) or len(flow) + indent <= _FLOW_WIDTH:
                lines.append(f"{pad}{_scalar(k)}: {flow}")
            else:
                lines.append(f"{pad}{_scalar(k)}:")
                lines.extend(_block(v, indent + 2))
    else:
        for item in value:
            flow = _flow(item)
            if not isinstance(item, dict | list) or len(flow) + indent <= _FLOW_WIDTH:
                lines.append(f"{pad}- {flow}")
            else:
                sub = _block(item, indent + 2)
                sub[0] = f"{pad}- {sub[0].lstrip()}"
                lines.extend(sub)
    return lines


def _is_simple(col: Mapping[str, Any]) -> bool:
    return not any(k in col for k in ("fields", "items", "keys", "values"))


def _column_lines(col: Mapping[str, Any], indent: int) -> list[str]:
    pad = " " * indent
    if _is_simple(col):
        return [f"{pad}- {_flow(col)}"]
    lines: list[str] = []
    first = True
    for key, value in col.items():
        lead = f"{pad}- " if first else f"{pad}  "
        first = False
        if key == "fields":
            lines.append(f"{lead}fields:")
            for sub in value:
                lines.extend(_column_lines(sub, indent + 4))
        elif key in ("items", "keys", "values") and isinstance(value, dict):
            if _is_simple(value):
                lines.append(f"{lead}{key}: {_flow(value)}")
            else:
                lines.append(f"{lead}{key}:")
                sub_lines = _column_lines(value, indent + 4)
                # a nested schema is a mapping, not a list item
                sub_lines[0] = sub_lines[0].replace("- ", "  ", 1)
                lines.extend(sub_lines)
        else:
            lines.append(f"{lead}{_scalar(key)}: {_flow(value)}")
    return lines


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        inner = ", ".join(f"{_scalar(k)}: {_flow(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(value)


def _scalar(value: Any) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    text: str = yaml.safe_dump(value, default_flow_style=True, width=10_000, allow_unicode=True)
    text = text.strip()
    if text.endswith("\n..."):
        text = text[: -len("\n...")]
    if text.endswith("..."):
        text = text[:-3].strip()
    # inside a flow collection these characters need quotes even where plain YAML does not
    needs_quotes = isinstance(value, str) and any(ch in text for ch in ",{}[]")
    if needs_quotes and not text.startswith(("'", '"')):
        text = "'" + value.replace("'", "''") + "'"
    return text


def validate_name(name: str) -> str:
    """Check a contract name (also used for URLs and file names: no path separators)."""
    if not _NAME_RE.match(name) or ".." in name:
        raise ContractFileError(
            f"invalid contract name {name!r}: use letters, digits, '.', '_' and '-' "
            "(at most 200, no '..')"
        )
    return name
