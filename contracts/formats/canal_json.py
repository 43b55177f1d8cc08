"""``canal-json``: Alibaba Canal's FlatMessage (also written by DTS and read by Flink).

One message carries one statement's rows::

    {"data": [{col: "<text>" | null}, ...], "old": [{changed col: "<old text>"}, ...] | null,
     "database", "table", "type": "INSERT" | "UPDATE" | "DELETE" | <DDL type>, "isDdl",
     "mysqlType": {col: "bigint(20) unsigned"}, "sqlType": {col: <java.sql.Types code>},
     "pkNames": [...], "es": <binlog ms>, "ts": <processing ms>, "id", "sql"}

Every value is text; the column types come from ``mysqlType`` (falling back to ``sqlType``).
Each element of ``data`` is one row change; on UPDATE, ``before`` is ``old`` overlaid on
``data``. DELETE comes in two conventions: rows in ``data`` (current, as open-source Canal) or,
for DTS change-tracking instances created before 2022-03-20, rows in ``old`` with ``data`` null.
DDL messages (``isDdl: true``) are control records, never row changes.

The two tables a Spark job needs to mirror are :data:`MYSQL_TYPES` (type mapping) and
:func:`canal_text_decoders` / :func:`decode_canal_value` (text → typed value).
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, Final

from contracts.contract import Contract
from contracts.errors import DecodeError, InputError
from contracts.events import ChangeEvent, ControlKind, ControlRecord, Normalized, Op, TableId
from contracts.formats._typing import (
    TEXT_DECODERS,
    TEXT_WHITESPACE,
    RowCodec,
    RowTypes,
    TableSeen,
    TextDecoder,
    TextKey,
    build_contract,
    decimal_schema,
    decode_located,
    decode_text,
    enum_set_text,
    enum_text,
    key_from,
    logical,
    parse_timestamp_text,
    path_of,
    timestamp_schema,
)
from contracts.formats.base import (
    Derived,
    Format,
    Inference,
    InferOptions,
    Message,
    SchemaVersionSeen,
    Violation,
    require_dict,
    tombstone,
)
from contracts.formats.spec import (
    CANAL_TEXT,
    Control,
    Equals,
    FirstOf,
    FormatSpec,
    ImageRule,
    Images,
    Ops,
    Overlay,
    Path,
    Position,
    Rows,
    Table,
    Time,
    raw_image,
    read_position,
    read_table,
)
from contracts.formats.spec import Image as SpecImage
from contracts.logical import (
    CONNECT_DATE_NAME,
    ENUM_NAME,
    ENUM_SET_NAME,
    JSON_NAME,
    MICRO_TIME_NAME,
    YEAR_NAME,
    ZONED_TIMESTAMP_NAME,
)
from contracts.schema import ConnectSchema, json_kind, primitive, struct
from contracts.sqltypes import normalize, parse_type_text

#: Canal ``type`` of a row change → canonical op (DDL types are recognized by ``isDdl``).
CANAL_TYPES: Final[Mapping[str, Op]] = {
    "INSERT": "c",
    "UPDATE": "u",
    "DELETE": "d",
    "TRUNCATE": "t",
}

_DATA: Final = ("data",)
_OLD: Final = ("old",)

#: Each element of ``data`` is one row change; an update's before image is its ``old`` element
#: (the changed columns) over the row; a delete's row is in ``data`` or, for DTS instances
#: created before 2022-03-20, in ``old``; a TRUNCATE is one change of the table, no image.
IMAGES_BY_OP: Final[Mapping[str, tuple[ImageRule | None, ImageRule | None]]] = {
    "c": (None, SpecImage(_DATA)),
    "u": (Overlay(_DATA, _OLD, needs_top=True), SpecImage(_DATA)),
    "d": (FirstOf((_DATA, _OLD)), None),
    "t": (None, None),
}

#: Canal's FlatMessage: ``type`` (``isDdl`` first), text rows in ``data``/``old`` read with
#: MySQL's text conventions, ``database``/``table``, ``ts``/``es``, the position ``id`` and
#: the row's index.
#: TiCDC's canal-json (``enable-tidb-extension``): a ``TIDB_WATERMARK`` message says every
#: change before ``_tidb.watermarkTs`` was sent; row changes carry their transaction's
#: ``_tidb.commitTs`` (the TSO), which is their position.
TIDB_CONTROLS: Final[Mapping[str, ControlKind]] = {"TIDB_WATERMARK": "heartbeat"}

SPEC: Final = FormatSpec(
    ops=Ops(("type",), CANAL_TYPES, controls=TIDB_CONTROLS),
    controls=(Control("ddl", Equals(("isDdl",), frozenset({True})), "DDL", over_op=True),),
    # Canal writes every cell as a string; one that is not is judged by its column as a plain
    # JSON value (the core's ``decode_cell``)
    images=Images(
        before=_OLD,
        after=_DATA,
        values="text",
        by_op=IMAGES_BY_OP,
        text=CANAL_TEXT,
        typed_cells=True,
    ),
    rows=Rows(index="row"),
    required=(("isDdl",), ("type",)),
    table=Table(database=("database",), name=("table",), empty_is_null=True),
    ts_ms=(Time(("ts",)),),
    source_ts_ms=(Time(("es",)),),
    position=Position(named={"id": ("id",), "commitTs": ("_tidb", "commitTs")}),
    fields=("sql", "mysqlType", "sqlType", "pkNames", "_tidb"),
)

# --- type mapping -----------------------------------------------------------------------------

TypeBuilder = Callable[[list[str], bool], ConnectSchema]


def _p(type_: str) -> TypeBuilder:
    return lambda _args, _unsigned: primitive(type_)


def _signed_or(signed: str, unsigned: str) -> TypeBuilder:
    return lambda _args, is_unsigned: primitive(unsigned if is_unsigned else signed)


def _tinyint(args: list[str], unsigned: bool) -> ConnectSchema:
    if args == ["1"]:
        return primitive("boolean")
    return primitive("int16")


def _bigint(_args: list[str], unsigned: bool) -> ConnectSchema:
    return decimal_schema(20, 0) if unsigned else primitive("int64")


def _bit(args: list[str], _unsigned: bool) -> ConnectSchema:
    return primitive("boolean") if args in ([], ["1"]) else primitive("int64")


def _decimal(args: list[str], _unsigned: bool) -> ConnectSchema:
    precision = int(args[0]) if args and args[0].isdigit() else 10
    scale = int(args[1]) if len(args) > 1 and args[1].isdigit() else 0
    return decimal_schema(precision, scale)


def _fsp(args: list[str]) -> int:
    return int(args[0]) if args and args[0].isdigit() else 0


def _datetime(args: list[str], _unsigned: bool) -> ConnectSchema:
    return timestamp_schema(_fsp(args))


def _allowed(name: str) -> TypeBuilder:
    def build(args: list[str], _unsigned: bool) -> ConnectSchema:
        allowed = ",".join(a.strip().strip("'") for a in args)
        return primitive("string", name=name, version=1, parameters={"allowed": allowed})

    return build


#: mysqlType base name → Connect schema builder (args of ``name(args)``, unsigned flag).
#: datetime is a wall-clock value (Debezium's Timestamp/MicroTimestamp); timestamp is an
#: instant (ZonedTimestamp), read in the contract's ``time_zone`` option (default UTC).
MYSQL_TYPES: Final[Mapping[str, TypeBuilder]] = {
    "bit": _bit,
    "bool": _p("boolean"),
    "boolean": _p("boolean"),
    "tinyint": _tinyint,
    "smallint": _signed_or("int16", "int32"),
    "mediumint": _p("int32"),
    "int": _signed_or("int32", "int64"),
    "integer": _signed_or("int32", "int64"),
    "bigint": _bigint,
    "float": _p("float"),
    "double": _p("double"),
    "real": _p("double"),
    "decimal": _decimal,
    "numeric": _decimal,
    "dec": _decimal,
    "fixed": _decimal,
    "date": lambda _a, _u: logical("int32", CONNECT_DATE_NAME),
    "datetime": _datetime,
    "timestamp": lambda _a, _u: logical("string", ZONED_TIMESTAMP_NAME),
    "time": lambda _a, _u: logical("int64", MICRO_TIME_NAME),
    "year": lambda _a, _u: logical("int32", YEAR_NAME),
    "char": _p("string"),
    "varchar": _p("string"),
    "tinytext": _p("string"),
    "text": _p("string"),
    "mediumtext": _p("string"),
    "longtext": _p("string"),
    "binary": _p("bytes"),
    "varbinary": _p("bytes"),
    "tinyblob": _p("bytes"),
    "blob": _p("bytes"),
    "mediumblob": _p("bytes"),
    "longblob": _p("bytes"),
    "json": lambda _a, _u: logical("string", JSON_NAME),
    "enum": _allowed(ENUM_NAME),
    "set": _allowed(ENUM_SET_NAME),
    "geometry": _p("bytes"),
    "point": _p("bytes"),
    "linestring": _p("bytes"),
    "polygon": _p("bytes"),
    "multipoint": _p("bytes"),
    "multilinestring": _p("bytes"),
    "multipolygon": _p("bytes"),
    "geometrycollection": _p("bytes"),
}

#: java.sql.Types code → Connect schema, used when ``mysqlType`` lacks a column.
SQL_TYPES: Final[Mapping[int, ConnectSchema]] = {
    -7: primitive("boolean"),  # BIT
    16: primitive("boolean"),  # BOOLEAN
    -6: primitive("int16"),  # TINYINT
    5: primitive("int16"),  # SMALLINT
    4: primitive("int32"),  # INTEGER
    -5: primitive("int64"),  # BIGINT
    7: primitive("float"),  # REAL
    6: primitive("double"),  # FLOAT (JDBC FLOAT is double precision)
    8: primitive("double"),  # DOUBLE
    1: primitive("string"),  # CHAR
    12: primitive("string"),  # VARCHAR
    -1: primitive("string"),  # LONGVARCHAR
    -15: primitive("string"),  # NCHAR
    -9: primitive("string"),  # NVARCHAR
    -16: primitive("string"),  # LONGNVARCHAR
    2005: primitive("string"),  # CLOB
    91: logical("int32", CONNECT_DATE_NAME),  # DATE
    92: logical("int64", MICRO_TIME_NAME),  # TIME
    93: timestamp_schema(6),  # TIMESTAMP (no zone in JDBC's sense)
    2014: logical("string", ZONED_TIMESTAMP_NAME),  # TIMESTAMP_WITH_TIMEZONE
    -2: primitive("bytes"),  # BINARY
    -3: primitive("bytes"),  # VARBINARY
    -4: primitive("bytes"),  # LONGVARBINARY
    2004: primitive("bytes"),  # BLOB
}
#: NUMERIC / DECIMAL: scale and precision are not in the code; taken from observed values.
SQL_DECIMAL_CODES: Final = frozenset({2, 3})


@lru_cache(maxsize=4096)
def mysql_type_schema(text: str) -> ConnectSchema | None:
    """The Connect schema for a Canal ``mysqlType`` string (None: not a known MySQL type).

    The text is read by the one MySQL type parser (:mod:`contracts.sqltypes`), which also
    resolves MySQL's aliases (``SERIAL``, ``INT1``..``INT8``, ``DOUBLE PRECISION``, ``BOOL`` ...).
    """
    try:
        sql_type = normalize(parse_type_text(text, "mysql"), "mysql")
    except InputError:
        return None
    builder = MYSQL_TYPES.get(sql_type.name)
    if builder is None:
        return None
    return builder(list(sql_type.args), sql_type.unsigned)


def column_schema(
    mysql_type: str | None, sql_type: Any, observed: ConnectSchema | None = None
) -> ConnectSchema | None:
    """A column's schema from ``mysqlType``, else ``sqlType`` (decimals take observed scale)."""
    if mysql_type is not None:
        found = mysql_type_schema(mysql_type)
        if found is not None:
            return found
    if isinstance(sql_type, int) and not isinstance(sql_type, bool):
        if sql_type in SQL_DECIMAL_CODES:
            if observed is not None and observed.name == decimal_schema(None, 0).name:
                return observed
            return decimal_schema(None, 0)
        return SQL_TYPES.get(sql_type)
    return None


# --- text decoding ----------------------------------------------------------------------------


def _canal_bool(text: str, _schema: ConnectSchema) -> bool:
    folded = text.strip(TEXT_WHITESPACE).lower()
    if folded in CANAL_TEXT.true_texts:
        return True
    if folded in CANAL_TEXT.false_texts:
        return False
    said = "/".join((*CANAL_TEXT.true_texts, *CANAL_TEXT.false_texts))
    raise DecodeError(f"{text!r} is not a boolean ({said})")


def _canal_bytes(text: str, _schema: ConnectSchema) -> bytes:
    # Canal writes binary columns as ISO-8859-1 text: one character per byte.
    try:
        return text.encode(CANAL_TEXT.bytes_charset)
    except UnicodeEncodeError:
        raise DecodeError(f"binary text has characters beyond {CANAL_TEXT.bytes_charset}") from None


def _zero_or(decode: TextDecoder) -> TextDecoder:
    """MySQL zero dates ('0000-00-00 ...') decode to None, as Debezium does."""
    zero = CANAL_TEXT.zero_date or ""

    def wrapped(text: str, schema: ConnectSchema) -> Any:
        if zero and text.strip(TEXT_WHITESPACE).startswith(zero):
            return None
        return decode(text, schema)

    return wrapped


def _zoned_in(zone: dt.tzinfo) -> TextDecoder:
    def decode(text: str, _schema: ConnectSchema) -> dt.datetime:
        try:
            parsed = parse_timestamp_text(text.strip(TEXT_WHITESPACE))
        except ValueError:
            raise DecodeError(
                f"{text!r} is not a timestamp (yyyy-MM-dd HH:mm:ss[.f][zone])"
            ) from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=zone)
        return parsed.astimezone(dt.UTC)

    return decode


@lru_cache(maxsize=16)
def canal_text_decoders(time_zone: str = "UTC") -> Mapping[TextKey, TextDecoder]:
    """The text → value table for Canal: the shared table plus Canal's conventions.

    Booleans may be ``1``/``0``; binary is ISO-8859-1 text; zero dates (of every date and
    timestamp type) are None; MySQL ``timestamp`` text is local time in ``time_zone``,
    decoded to a UTC instant.
    """
    zone = dt.UTC if time_zone == "UTC" else zoneinfo.ZoneInfo(time_zone)
    table: dict[TextKey, TextDecoder] = dict(TEXT_DECODERS)
    table["boolean"] = _canal_bool
    table["bytes"] = _canal_bytes
    table[("enum", None)] = enum_text(CANAL_TEXT.enum_numbers)
    table[("enum-set", None)] = enum_set_text(CANAL_TEXT.enum_numbers)
    for key, decoder in TEXT_DECODERS.items():
        if isinstance(key, tuple) and key[0] in ("date", "timestamp"):
            table[key] = _zero_or(decoder)
    table[("zoned-timestamp", "iso")] = _zero_or(_zoned_in(zone))
    return table


def decode_canal_value(text: str | None, schema: ConnectSchema, time_zone: str = "UTC") -> Any:
    """One Canal text value → the Python value of its Connect type (None stays None)."""
    if text is None:
        return None
    return decode_text(text, schema, canal_text_decoders(time_zone))


# --- envelope ---------------------------------------------------------------------------------

Image = dict[str, Any]


@dataclass(frozen=True, slots=True)
class CanalMessage:
    """One parsed FlatMessage; ``rows`` holds (before, after) per row (empty for DDL)."""

    table: TableId
    type: str
    is_ddl: bool
    op: Op | None
    rows: tuple[tuple[Image | None, Image | None], ...]
    mysql_type: dict[str, str]
    sql_type: dict[str, Any]
    pk_names: tuple[str, ...]
    es: int | None
    ts: int | None
    id: Any
    sql: str
    delete_image: str | None
    position: dict[str, Any]
    #: The kind of control record a non-DDL message is (TiCDC's watermark), else None.
    control: ControlKind | None = None
    #: Whether a row image leaves out a column ``mysqlType`` lists (MySQL's MINIMAL image).
    partial: bool = False


def _rows(doc: dict[str, Any], key: str, where: str) -> list[Image] | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, list):
        raise InputError(
            f"{key} must be an array of rows, got {json_kind(value)}", f"{where} $.{key}"
        )
    return [require_dict(r, where, f"$.{key}[{i}]", "a row") for i, r in enumerate(value)]


def _str_map(doc: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = doc.get(key)
    if value is None:
        return {}
    return require_dict(value, where, f"$.{key}", key)


def _int_field(doc: dict[str, Any], key: str, where: str) -> int | None:
    value = doc.get(key)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InputError(f"{key} must be an integer, got {json_kind(value)}", f"{where} $.{key}")


def parse_canal(message: Message) -> CanalMessage:
    """Parse one FlatMessage; raises InputError (with the JSON path) when it is malformed."""
    where = message.where
    doc = require_dict(message.value, where, "$", "a Canal FlatMessage")
    is_ddl = doc.get("isDdl")
    if not isinstance(is_ddl, bool):
        raise InputError("isDdl must be true or false", f"{where} $.isDdl")
    type_ = doc.get("type")
    if not isinstance(type_, str):
        raise InputError("type must be a string", f"{where} $.type")
    op: Op | None = None
    rows: list[tuple[Image | None, Image | None]] = []
    delete_image = None
    control: ControlKind | None = None
    if not is_ddl:
        op, control = SPEC.ops.read(type_)
        if op is None and control is None:
            raise InputError(SPEC.ops.unknown(type_, ("a DDL",)), f"{where} $.type")
    try:
        table = read_table(SPEC.table, doc, where) or TableId()
    except DecodeError:
        if op is not None:
            raise
        table = TableId()  # a control record's table is read as far as it can be
    if op is not None:
        rows, delete_image = _row_pairs(
            op, _rows(doc, "data", where), _rows(doc, "old", where), where
        )
    pk = doc.get("pkNames") or []
    if not isinstance(pk, list) or not all(isinstance(k, str) for k in pk):
        raise InputError("pkNames must be an array of column names", f"{where} $.pkNames")
    sql = doc.get("sql")
    mysql_type = {k: str(v) for k, v in _str_map(doc, "mysqlType", where).items()}
    # a row of data (old holds only changed columns by design) without every listed column
    data_rows = [before if op == "d" else after for before, after in rows]
    partial = delete_image != "old" and any(
        row is not None and not mysql_type.keys() <= row.keys() for row in data_rows
    )
    return CanalMessage(
        table=table,
        type=type_,
        is_ddl=is_ddl,
        op=op,
        rows=tuple(rows),
        mysql_type=mysql_type,
        sql_type=_str_map(doc, "sqlType", where),
        pk_names=tuple(pk),
        es=_int_field(doc, "es", where),
        ts=_int_field(doc, "ts", where),
        id=doc.get("id"),
        sql=sql if isinstance(sql, str) else "",
        delete_image=delete_image,
        position=read_position(SPEC.position, doc, where),
        control=control,
        partial=partial,
    )


def _row_pairs(
    op: Op, data: list[Image] | None, old: list[Image] | None, where: str
) -> tuple[list[tuple[Image | None, Image | None]], str | None]:
    """(before, after) per row change, as :data:`IMAGES_BY_OP` says, and which array a
    delete's rows came from."""
    before_rule, after_rule = SPEC.images.rules(op)
    if before_rule is None and after_rule is None:
        return [(None, None)], None  # TRUNCATE: the table, not its rows
    if isinstance(before_rule, FirstOf):  # DELETE: the first array holding rows
        arrays: dict[Path, list[Image] | None] = {_DATA: data, _OLD: old}
        for path in before_rule.images:
            rows = arrays[path]
            if rows:
                return [(row, None) for row in rows], path[0]
        raise InputError(
            "a DELETE needs its rows in data (or, before 2022, old)", f"{where} $.data"
        )
    if data is None:
        raise InputError(
            f"an {'UPDATE' if op == 'u' else 'INSERT'} needs data rows", f"{where} $.data"
        )
    if not data:  # an empty list: a change of no rows would vanish without a word
        raise InputError("holds no rows", f"{where} $.data")
    if before_rule is None:
        return [(None, row) for row in data], None
    if old is not None and len(old) != len(data):
        raise InputError(f"old has {len(old)} rows but data has {len(data)}", f"{where} $.old")
    if old is None:  # no changed columns: no before image (Overlay needs its top)
        return [(None, row) for row in data], None
    found = [
        raw_image(before_rule, {_DATA: row, _OLD: prev})
        for row, prev in zip(data, old, strict=True)
    ]
    return [(before, row) for before, row in zip(found, data, strict=True)], None


# --- the format -------------------------------------------------------------------------------


def _signature(msg: CanalMessage) -> tuple[tuple[str, str], ...]:
    return tuple(msg.mysql_type.items())


class CanalJson(Format):
    """Alibaba Canal FlatMessage JSON."""

    name: ClassVar[str] = "canal-json"
    description: ClassVar[str] = (
        "Alibaba Canal FlatMessage: rows as text in data/old, types in mysqlType/sqlType"
    )
    embedded_schema: ClassVar = "no"
    spec: ClassVar[FormatSpec] = SPEC

    def detect(self, message: Message) -> bool:
        value = message.value
        return (
            isinstance(value, dict)
            and isinstance(value.get("isDdl"), bool)
            and {"type", "table", "database"} <= value.keys()
            and ("data" in value or "sql" in value)
        )

    def infer(self, messages: Iterable[Message], options: InferOptions) -> Inference:
        types = RowTypes()
        seen = TableSeen()
        versions: dict[tuple[tuple[str, str], ...], list[Any]] = {}
        latest: CanalMessage | None = None
        count = 0
        ddl = 0
        delete_images: set[str] = set()
        controls: dict[str, int] = {}
        partial = False
        for message in messages:
            count += 1
            if message.value is None:  # a tombstone: nothing to infer from
                continue
            msg = parse_canal(message)
            if msg.is_ddl:
                ddl += 1
                continue
            if msg.control is not None:
                controls[msg.control] = controls.get(msg.control, 0) + 1
                continue
            partial = partial or msg.partial
            seen.see(msg.table, message.where)
            types.declare(msg.mysql_type)
            for before, after in msg.rows:
                for image in (before, after):
                    if image:
                        types.observe_row(image)
            sig = _signature(msg)
            entry = versions.setdefault(sig, [len(versions) + 1, message.where, 0])
            entry[2] += 1
            latest = msg
            if msg.delete_image:
                delete_images.add(msg.delete_image)
        if latest is None:
            raise InputError("no row changes in the sample: nothing to infer columns from")
        fields, warnings = self._fields(types, latest, options.infer_types)
        fmt_options: dict[str, Any] = {"mysql_types": dict(latest.mysql_type)}
        if any(f.name == ZONED_TIMESTAMP_NAME for f in fields):
            fmt_options["time_zone"] = "UTC"
        if delete_images:
            fmt_options["delete_image"] = "/".join(sorted(delete_images))
        if partial:
            # rows that leave out columns (binlog_row_image=MINIMAL): a full image is not due
            fmt_options["partial_images"] = True
        contract = build_contract(
            fmt=self.name,
            options=options,
            table=seen.table,
            fields=fields,
            key=[k for k in latest.pk_names if k in types.columns],
            format_options=fmt_options,
        )
        history = tuple(
            SchemaVersionSeen(
                version=v[0], first_seen=v[1], messages=v[2], columns=tuple(k for k, _ in sig)
            )
            for sig, v in versions.items()
        )
        return Inference(
            contract=contract,
            messages=count,
            history=history if len(history) > 1 else (),
            controls={**({"ddl": ddl} if ddl else {}), **controls},
            warnings=tuple(warnings),
        )

    def _fields(
        self, types: RowTypes, latest: CanalMessage, infer_types: bool
    ) -> tuple[list[ConnectSchema], list[str]]:
        pk = set(latest.pk_names)
        names = [*latest.mysql_type, *(n for n in types.columns if n not in latest.mysql_type)]
        out: list[ConnectSchema] = []
        warnings: list[str] = []
        for name in names:
            summary = types.summary(name)
            found = column_schema(
                latest.mysql_type.get(name), latest.sql_type.get(name), summary.schema(True)
            )
            if found is None:
                if name in latest.mysql_type:
                    warnings.append(
                        f"column {name}: unknown mysqlType {latest.mysql_type[name]!r}; "
                        "inferred from values"
                    )
                found = summary.schema(infer_types)
            out.append(found.as_optional(name not in pk).as_field(name))
        return out, warnings

    def derive(self, contract: Contract) -> Derived:
        columns = contract.row_schema.fields or ()
        data_row = struct(
            [primitive("string", optional=c.optional, field=c.field) for c in columns]
        )
        old_row = struct([primitive("string", optional=True, field=c.field) for c in columns])
        value = struct(
            [
                ConnectSchema(type="array", optional=True, items=data_row, field="data"),
                primitive("string", field="database"),
                primitive("int64", field="es"),
                primitive("int64", field="id"),
                primitive("boolean", field="isDdl"),
                _map("mysqlType", primitive("string")),
                ConnectSchema(type="array", optional=True, items=old_row, field="old"),
                ConnectSchema(
                    type="array", optional=True, items=primitive("string"), field="pkNames"
                ),
                primitive("string", optional=True, field="sql"),
                _map("sqlType", primitive("int32")),
                primitive("string", field="table"),
                primitive("int64", field="ts"),
                primitive("string", field="type"),
            ]
        )
        return Derived(key=None, value=value)

    def validate(self, message: Message, contract: Contract) -> list[Violation]:
        if message.value is None:
            return []  # a tombstone
        where = message.where
        try:
            msg = parse_canal(message)
        except InputError as err:
            return [Violation(where, path_of(err), "envelope", err.what)]
        if msg.is_ddl or msg.control is not None:
            return []
        found: list[Violation] = []
        if msg.table != TableId(contract.table.database, None, contract.table.name):
            found.append(
                Violation(
                    where,
                    "$.table",
                    "envelope",
                    f"table {msg.table.qualified()} is not the contract's {contract.table_id.qualified()}",
                )
            )
        codec = RowCodec.of(contract, canal_text_decoders(contract.option("time_zone", "UTC")))
        found += _type_drift(msg, codec, where)
        data_key = "old" if msg.delete_image == "old" else "data"
        full = not contract.option("partial_images", False)
        for i, (before, after) in enumerate(msg.rows):
            if msg.op == "u":
                found += codec.check(after, f"$.data[{i}]", where, full=full)
                changed = {
                    k: v
                    for k, v in (before or {}).items()
                    if after is None or k not in after or after[k] != v
                }
                found += codec.check(changed, f"$.old[{i}]", where, full=False)
            else:
                image = after if msg.op == "c" else before
                found += codec.check(
                    image, f"$.{data_key}[{i}]", where, full=full and data_key == "data"
                )
        return found

    def table_of(self, message: Message) -> TableId | None:
        # The FlatMessage's database and table, read as parse_canal reads them.
        doc = require_dict(message.value, message.where, "$", "a Canal FlatMessage")
        table = read_table(SPEC.table, doc, message.where)
        return table if table is not None and table.qualified() else None

    def normalize(self, message: Message, contract: Contract | None = None) -> list[Normalized]:
        if message.value is None:
            return [tombstone(message)]
        msg = parse_canal(message)
        if msg.is_ddl:
            return [ControlRecord("ddl", f"{msg.type}: {msg.sql}".strip(), msg.table)]
        if msg.control is not None:
            return [
                ControlRecord(msg.control, msg.type, None if msg.table == TableId() else msg.table)
            ]
        codec = _codec_for(msg, contract)
        key_names = contract.key if contract is not None and contract.key else msg.pk_names
        assert msg.op is not None
        out: list[Normalized] = []
        # an update's before image is old overlaid on data: data's values are decoded (and
        # reported) as the after image first, so what fails in the before image is old's
        from_old = msg.delete_image == "old" or msg.op == "u"
        whole = SPEC.images.rules(msg.op) == (None, None)
        for i, (before_raw, after_raw) in enumerate(msg.rows):
            after = decode_located(codec, after_raw, f"$.data[{i}]", message.where)
            path = f"$.{'old' if from_old else 'data'}[{i}]"
            before = decode_located(codec, before_raw, path, message.where)
            position = dict(msg.position)
            if not whole and SPEC.rows is not None:
                position[SPEC.rows.index] = i
            out.append(
                ChangeEvent(
                    op=msg.op,
                    table=msg.table,
                    key=key_from(key_names, after, before),
                    before=before,
                    after=after,
                    ts_ms=msg.ts,
                    source_ts_ms=msg.es,
                    position=position,
                )
            )
        return out


def _map(field: str, values: ConnectSchema) -> ConnectSchema:
    return ConnectSchema(
        type="map", optional=True, keys=primitive("string"), values=values, field=field
    )


def _same_type(a: ConnectSchema, b: ConnectSchema) -> bool:
    return (a.type, a.name, a.params) == (b.type, b.name, b.params)


def _type_drift(msg: CanalMessage, codec: RowCodec, where: str) -> list[Violation]:
    found: list[Violation] = []
    for name, mysql_type in msg.mysql_type.items():
        declared = codec.columns.get(name)
        if declared is None:
            found.append(
                Violation(
                    where,
                    f"$.mysqlType.{name}",
                    "extra-column",
                    f"column {name!r} is not in the contract",
                )
            )
            continue
        seen = column_schema(mysql_type, msg.sql_type.get(name))
        if seen is not None and not _same_type(seen, declared):
            found.append(
                Violation(
                    where,
                    f"$.mysqlType.{name}",
                    "schema-drift",
                    f"mysqlType {mysql_type!r} maps to {seen.describe(detail=True)}, the contract says {declared.describe(detail=True)}",
                )
            )
    for name in codec.names:
        if msg.mysql_type and name not in msg.mysql_type:
            found.append(
                Violation(
                    where, f"$.mysqlType.{name}", "missing-column", f"column {name!r} is missing"
                )
            )
    return found


_MESSAGE_CODECS: dict[tuple[Any, ...], RowCodec] = {}


def _codec_for(msg: CanalMessage, contract: Contract | None) -> RowCodec:
    """The contract's codec, or one built from the message's own mysqlType/sqlType (cached)."""
    if contract is not None:
        return RowCodec.of(contract, canal_text_decoders(contract.option("time_zone", "UTC")))
    sig = (_signature(msg), tuple(sorted((k, str(v)) for k, v in msg.sql_type.items())))
    codec = _MESSAGE_CODECS.get(sig)
    if codec is None:
        names = list(dict.fromkeys([*msg.mysql_type, *msg.sql_type]))
        fields = []
        for name in names:
            schema = column_schema(msg.mysql_type.get(name), msg.sql_type.get(name)) or primitive(
                "string"
            )
            fields.append(schema.as_optional(True).as_field(name))
        codec = RowCodec(fields, canal_text_decoders("UTC"), lenient=True)
        if len(_MESSAGE_CODECS) < 256:
            _MESSAGE_CODECS[sig] = codec
    return codec
