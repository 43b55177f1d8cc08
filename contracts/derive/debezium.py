"""Contracts for tables as Debezium's MySQL and PostgreSQL connectors write them (``debezium-json``).

:class:`DebeziumSettings` holds what the connector's configuration decides (its options, with
Debezium's defaults; the topic prefix; the version); :func:`debezium_contract` turns one
:class:`~contracts.derive.model.Table` into the contract whose derived envelope
(``contracts.formats.debezium_json``) is the schema embedded in the connector's messages:
``<prefix>.Value``/``.Key``/``.Envelope`` names, the version's ``source`` block, every column
typed by the connector's mapping table, optional exactly when nullable, with its default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from contracts.contract import Contract, contract_from_schema
from contracts.derive.debezium_mysql import MYSQL_MAPPING, MYSQL_SETTINGS
from contracts.derive.debezium_postgres import POSTGRES_MAPPING, POSTGRES_SETTINGS
from contracts.derive.defaults import connect_default
from contracts.derive.envelopes import EnvelopeProfile, builtin_profile
from contracts.derive.model import Column, Table
from contracts.derive.typemap import TypeMapping, Version, lookup, row_schema, show_version
from contracts.errors import InputError
from contracts.events import TableId
from contracts.formats._connect import field_json
from contracts.schema import ConnectSchema, struct
from contracts.sqltypes import Dialect, SqlType

#: Debezium's connector for each dialect.
CONNECTORS: Final[Mapping[Dialect, str]] = {
    "mysql": "mysql",
    "mariadb": "mysql",
    "postgres": "postgresql",
}
_MAPPINGS: Final[Mapping[str, TypeMapping]] = {
    "mysql": MYSQL_MAPPING,
    "postgresql": POSTGRES_MAPPING,
}
_SETTINGS: Final[Mapping[str, Mapping[str, tuple[str, tuple[str, ...]]]]] = {
    "mysql": MYSQL_SETTINGS,
    "postgresql": POSTGRES_SETTINGS,
}
#: Options that are not type settings but change the schema (or name it).
KEY_COLUMNS: Final = "message.key.columns"
PROPAGATE_COLUMNS: Final = "column.propagate.source.type"
PROPAGATE_TYPES: Final = "datatype.propagate.source.type"
NAME_ADJUSTMENT: Final = "schema.name.adjustment.mode"
_PREFIX_OPTIONS: Final = ("topic.prefix", "database.server.name")
_OTHER_OPTIONS: Final = (KEY_COLUMNS, PROPAGATE_COLUMNS, PROPAGATE_TYPES, NAME_ADJUSTMENT)

#: The version derive assumes when none is given (the built-in envelope of current Debezium).
DEFAULT_VERSION: Final[Version] = (3, 0)
#: Parameters Debezium adds when a column's source type is propagated.
SOURCE_TYPE: Final = "__debezium.source.column.type"
SOURCE_LENGTH: Final = "__debezium.source.column.length"
SOURCE_SCALE: Final = "__debezium.source.column.scale"
SOURCE_NAME: Final = "__debezium.source.column.name"


@dataclass(frozen=True, slots=True)
class DebeziumSettings:
    """What the connector's configuration decides about the schemas it writes."""

    connector: str
    server_name: str
    version: Version = DEFAULT_VERSION
    options: Mapping[str, str] = field(default_factory=dict)
    key_columns: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = ()
    propagate_columns: tuple[re.Pattern[str], ...] = ()
    propagate_types: tuple[re.Pattern[str], ...] = ()
    envelope: EnvelopeProfile | None = None

    @property
    def profile(self) -> EnvelopeProfile:
        return self.envelope or builtin_profile(self.connector, self.version)


def debezium_settings(
    dialect: Dialect,
    server_name: str | None,
    options: Mapping[str, str],
    version: Version = DEFAULT_VERSION,
    envelope: EnvelopeProfile | None = None,
) -> DebeziumSettings:
    """Validate connector options (unknown keys and values are errors) and fill in defaults."""
    connector = CONNECTORS[dialect]
    known = _SETTINGS[connector]
    effective = {key: default for key, (default, _) in known.items()}
    prefix = server_name
    for key, value in options.items():
        if key in _PREFIX_OPTIONS:
            prefix = prefix or value
            continue
        if key not in known and key not in _OTHER_OPTIONS:
            listed = ", ".join([*known, *_OTHER_OPTIONS, *_PREFIX_OPTIONS])
            raise InputError(
                f"{key!r} is not an option that changes the {connector} connector's schemas "
                f"(derive knows: {listed})",
                f"--connector-option {key}",
            )
        allowed = known[key][1] if key in known else ()
        if allowed and value not in allowed:
            raise InputError(
                f"{value!r} is not a value of {key} (one of {', '.join(allowed)})",
                f"--connector-option {key}",
            )
        effective[key] = value
    if not prefix:
        raise InputError(
            "debezium-json needs the connector's topic prefix (topic.prefix, formerly "
            "database.server.name): pass --server-name NAME",
            "--server-name",
        )
    adjustment = effective.get(NAME_ADJUSTMENT, "avro" if version < (2, 0) else "none")
    if adjustment not in ("none", "avro", "avro_unicode"):
        raise InputError(
            f"{adjustment!r} is not a value of {NAME_ADJUSTMENT} (none, avro or avro_unicode)",
            f"--connector-option {NAME_ADJUSTMENT}",
        )
    effective[NAME_ADJUSTMENT] = adjustment
    return DebeziumSettings(
        connector=connector,
        server_name=prefix,
        version=version,
        options=effective,
        key_columns=_key_columns(effective.get(KEY_COLUMNS, "")),
        propagate_columns=_patterns(effective.get(PROPAGATE_COLUMNS, ""), PROPAGATE_COLUMNS),
        propagate_types=_patterns(effective.get(PROPAGATE_TYPES, ""), PROPAGATE_TYPES),
        envelope=envelope,
    )


def _patterns(text: str, option: str) -> tuple[re.Pattern[str], ...]:
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            out.append(re.compile(part, re.IGNORECASE))
        except re.error as err:
            raise InputError(f"{part!r} is not a regular expression: {err}", option) from None
    return tuple(out)


def _key_columns(text: str) -> tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]:
    """``db.table:c1,c2;db.other:c3`` (Debezium's message.key.columns)."""
    out = []
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        table, sep, columns = part.rpartition(":")
        names = tuple(c.strip() for c in columns.split(",") if c.strip())
        if not sep or not table or not names:
            raise InputError(
                f"{part!r} is not <table>:<column>[,<column>...]",
                f"--connector-option {KEY_COLUMNS}",
            )
        out.append((_patterns(table, KEY_COLUMNS)[0], names))
    return tuple(out)


# --- names ------------------------------------------------------------------------------------


def topic_prefix(table: Table, settings: DebeziumSettings) -> str:
    """``<server>.<database or schema>.<table>``: the topic and the schemas' name prefix."""
    owner = table.schema if table.dialect == "postgres" else table.database
    if owner is None:
        raise InputError(
            f"table {table.name}: its database is unknown (no USE or qualified name); pass "
            "--database NAME",
            table.where or None,
        )
    return f"{settings.server_name}.{owner}.{table.name}"


def adjust_name(name: str, mode: str) -> str:
    """A schema name as ``schema.name.adjustment.mode`` leaves it (``avro``: each dotted part a
    valid Avro name)."""
    if mode == "none":
        return name
    parts = []
    for part in name.split("."):
        fixed = re.sub(r"[^A-Za-z0-9_]", "_", part)
        parts.append(f"_{fixed}" if fixed[:1].isdigit() else fixed)
    return ".".join(parts)


# --- the contract -----------------------------------------------------------------------------


def debezium_contract(
    table: Table, settings: DebeziumSettings, database: str | None = None
) -> Contract:
    """The ``debezium-json`` contract of ``table`` under ``settings``."""
    prefix = topic_prefix(table, settings)
    adjust = settings.options[NAME_ADJUSTMENT]
    profile = settings.profile
    columns = [column_schema(table, col, settings) for col in table.columns]
    key = key_columns(table, settings)
    options: dict[str, Any] = {
        "server_name": settings.server_name,
        "connector": profile.connector or settings.connector,
        "envelope_name": adjust_name(f"{prefix}.Envelope", adjust),
    }
    if profile.envelope_version is not None:
        options["envelope_version"] = profile.envelope_version
    options["row_name"] = adjust_name(f"{prefix}.Value", adjust)
    if key:
        options["key_name"] = adjust_name(f"{prefix}.Key", adjust)
    options["envelope"] = list(profile.layout)
    options["source"] = field_json(profile.source)
    if "transaction" in profile.layout:
        options["transaction"] = field_json(profile.transaction)
    if table.dialect == "postgres":
        table_id = TableId(database, table.schema, table.name)
    else:
        table_id = TableId(table.database, None, table.name)
    return contract_from_schema(
        name=prefix,
        format="debezium-json",
        table=table_id,
        row=struct(columns, name=options["row_name"]),
        key=key,
        topic=prefix,
        options=options,
    )


def key_columns(table: Table, settings: DebeziumSettings) -> tuple[str, ...]:
    """``message.key.columns`` for this table, else the primary key, else (MySQL) the first
    unique key whose columns are all NOT NULL (what MySQL itself promotes to primary key)."""
    for pattern, names in settings.key_columns:
        if pattern.fullmatch(table.qualified):
            missing = [n for n in names if table.column(n) is None]
            if missing:
                raise InputError(
                    f"{KEY_COLUMNS} names {', '.join(missing)}, not columns of {table.qualified}",
                    f"--connector-option {KEY_COLUMNS}",
                )
            return tuple(_declared(table, n) for n in names)
    if table.primary_key:
        return tuple(_declared(table, n) for n in table.primary_key)
    if table.dialect != "postgres":
        for unique in table.unique_keys:
            cols = [table.column(n) for n in unique]
            if all(c is not None and not c.nullable for c in cols):
                return tuple(_declared(table, n) for n in unique)
    return ()


def _declared(table: Table, name: str) -> str:
    found = table.column(name)
    return found.name if found is not None else name


def column_schema(table: Table, column: Column, settings: DebeziumSettings) -> ConnectSchema:
    """A column's Connect field as the connector writes it."""
    mapping = _MAPPINGS[settings.connector]
    sql_type = column.type
    element = sql_type.element() if sql_type.array else sql_type
    row = lookup(mapping, element, settings.options, settings.version)
    if row is None:
        raise InputError(
            f"column {column.name}: the {settings.connector} connector (Debezium "
            f"{show_version(settings.version)}) has no mapping for type {sql_type.spelled()}",
            column.where or table.where or None,
        )
    schema = row_schema(row, element, settings.options)
    if sql_type.array:
        schema = ConnectSchema(type="array", items=schema.as_optional(True))
    schema = schema.replace(optional=column.nullable)
    schema = _propagated(table, column, schema, settings)
    default = connect_default(column, schema, table.dialect, settings.version)
    return schema.replace(default=default, field=column.name)


def _propagated(
    table: Table, column: Column, schema: ConnectSchema, settings: DebeziumSettings
) -> ConnectSchema:
    """``__debezium.source.column.*`` parameters when the column's source type is propagated."""
    type_name = source_type_name(column.type, table.dialect)
    qualified = f"{table.qualified}.{column.name}"
    wanted = any(p.fullmatch(qualified) for p in settings.propagate_columns) or any(
        p.fullmatch(f"{table.qualified}.{type_name}") or p.fullmatch(type_name)
        for p in settings.propagate_types
    )
    if not wanted:
        return schema
    params = dict(schema.parameters or ())
    params[SOURCE_TYPE] = type_name
    length, scale = column.type.length, column.type.scale
    if length is not None and column.type.name not in ("enum", "set"):
        params[SOURCE_LENGTH] = str(length)
        if scale is not None or table.dialect == "postgres":
            params[SOURCE_SCALE] = str(scale or 0)
    if settings.version >= (3, 0):
        params[SOURCE_NAME] = column.name
    return schema.replace(parameters=tuple(params.items()))


#: PostgreSQL type names as the connector reports them (pg_type.typname, upper case).
_PG_TYPE_NAMES: Final = {
    "integer": "INT4",
    "smallint": "INT2",
    "bigint": "INT8",
    "real": "FLOAT4",
    "double precision": "FLOAT8",
    "character varying": "VARCHAR",
    "character": "BPCHAR",
    "boolean": "BOOL",
    "bit varying": "VARBIT",
}


def source_type_name(sql_type: SqlType, dialect: Dialect) -> str:
    """The type name Debezium's ``__debezium.source.column.type`` carries."""
    if dialect == "postgres":
        return _PG_TYPE_NAMES.get(sql_type.name, sql_type.name.upper())
    name = sql_type.name.upper()
    if sql_type.unsigned:
        name += " UNSIGNED"
    if sql_type.zerofill:
        name += " ZEROFILL"
    return name
