"""How a connector types a column: declarative rows, and the small engine that reads them.

A connector's mapping is a tuple of :class:`TypeRow` (see :mod:`contracts.derive.debezium_mysql`
and :mod:`contracts.derive.debezium_postgres`). Each row says, for some SQL types, under which
column condition (``unsigned``, ``length<=3`` ...), which connector setting value (the settings
are the table's columns) and which connector versions, what Connect schema the connector
writes, and where that fact is documented. :func:`lookup` returns the first row that applies;
no row is an error, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from contracts.errors import InputError
from contracts.logical import GEOGRAPHY_NAME, GEOMETRY_NAME, POINT_NAME, VARIABLE_DECIMAL_NAME
from contracts.schema import ConnectSchema, primitive, struct
from contracts.sqltypes import SqlType

Version = tuple[int, ...]

#: Debezium's development branch: rows that changed after the last release this project checked.
MAIN: Final[Version] = (1_000_000,)


def parse_version(text: str) -> Version:
    """``2.7``, ``2.7.1.Final``, ``3`` or ``main`` → a comparable tuple."""
    cleaned = text.strip().lower()
    if cleaned == "main":
        return MAIN
    parts = re.findall(r"[0-9]+", cleaned.split(".final")[0])
    if not parts or not re.fullmatch(r"[0-9]+(\.[0-9]+)*(\.[a-z0-9]+)?", cleaned):
        raise InputError(
            f"{text!r} is not a Debezium version (write e.g. 1.9, 2.7.3.Final or main)",
            "--debezium-version",
        )
    return tuple(int(p) for p in parts[:3])


def show_version(version: Version) -> str:
    return "main" if version == MAIN else ".".join(str(p) for p in version)


@dataclass(frozen=True, slots=True)
class TypeRow:
    """One row of a connector's type mapping.

    ``types`` are canonical SQL type names (:mod:`contracts.sqltypes`); ``where`` a
    comma-separated list of column conditions (``unsigned``, ``signed``, ``length=1``,
    ``length<=3``, ``scale``, ``no-scale``, ``no-length``); ``setting``/``value`` the connector
    option this row depends on and its value; ``since``/``until`` the versions it holds for
    (``until`` excluded). The result is ``connect`` (a Connect type, or ``struct:<shape>`` /
    ``map:<shape>`` for a composite from :data:`SHAPES`), the semantic ``name`` and its
    ``params`` (``{length}``, ``{scale}``, ``{values}`` and ``{<option>}`` are filled in).
    ``doc`` names the Debezium documentation section (or test) the row comes from.
    """

    types: tuple[str, ...]
    connect: str
    doc: str
    name: str | None = None
    params: tuple[tuple[str, str], ...] = ()
    where: str = ""
    setting: str = ""
    value: str = ""
    since: Version | None = None
    until: Version | None = None


@dataclass(frozen=True, slots=True)
class TypeMapping:
    """A connector's mapping: its rows, and the length a type has when none is written."""

    connector: str
    rows: tuple[TypeRow, ...]
    default_lengths: Mapping[str, int]


def applies(row: TypeRow, sql_type: SqlType, settings: Mapping[str, str], version: Version,
            default_lengths: Mapping[str, int]) -> bool:  # fmt: skip
    """Whether ``row`` holds for a column of ``sql_type`` under ``settings`` at ``version``."""
    if sql_type.name not in row.types:
        return False
    if row.setting and settings.get(row.setting) != row.value:
        return False
    if row.since is not None and version < row.since:
        return False
    if row.until is not None and version >= row.until:
        return False
    return all(
        _holds(cond.strip(), sql_type, default_lengths) for cond in row.where.split(",") if cond
    )


_COMPARISON: Final = re.compile(r"(length|scale)(<=|>=|=|<|>)([0-9]+)")


def _holds(condition: str, sql_type: SqlType, default_lengths: Mapping[str, int]) -> bool:
    if condition == "unsigned":
        return sql_type.unsigned
    if condition == "signed":
        return not sql_type.unsigned
    if condition == "scale":
        return sql_type.scale is not None
    if condition == "no-scale":
        return sql_type.scale is None
    if condition == "length":
        return sql_type.length is not None
    if condition == "no-length":
        return sql_type.length is None
    match = _COMPARISON.fullmatch(condition)
    if match is None:
        raise ValueError(f"unknown type-row condition {condition!r}")
    attr, op, bound = match.group(1), match.group(2), int(match.group(3))
    if attr == "length":
        actual = sql_type.length
        if actual is None:
            actual = default_lengths.get(sql_type.name)
    else:
        actual = sql_type.scale
    if actual is None:
        return False
    return {
        "=": actual == bound,
        "<": actual < bound,
        "<=": actual <= bound,
        ">": actual > bound,
        ">=": actual >= bound,
    }[op]


def lookup(mapping: TypeMapping, sql_type: SqlType, settings: Mapping[str, str],
           version: Version) -> TypeRow | None:  # fmt: skip
    """The first row of ``mapping`` that holds (None: the connector has no mapping)."""
    for row in mapping.rows:
        if applies(row, sql_type, settings, version, mapping.default_lengths):
            return row
    return None


# --- building the Connect schema of a row -----------------------------------------------------

_OPTIONAL_INT32: Final = primitive("int32", optional=True)
_OPTIONAL_BYTES: Final = primitive("bytes", optional=True)


def _geometry(name: str, doc: str, point: bool = False) -> ConnectSchema:
    fields = [primitive("bytes", field="wkb"), _OPTIONAL_INT32.as_field("srid")]
    if point:
        fields = [
            primitive("double", field="x"),
            primitive("double", field="y"),
            _OPTIONAL_BYTES.as_field("wkb"),
            _OPTIONAL_INT32.as_field("srid"),
        ]
    return struct(fields, name=name, version=1, doc=doc)


#: Composite schemas (``struct:<shape>``, ``map:<shape>``) as Debezium's builders make them.
SHAPES: Final[Mapping[str, ConnectSchema]] = {
    "geometry": _geometry(GEOMETRY_NAME, "Geometry"),
    "geography": _geometry(GEOGRAPHY_NAME, "Geography"),
    "point": _geometry(POINT_NAME, "Geometry (POINT)", point=True),
    "variable_scale_decimal": struct(
        [primitive("int32", field="scale"), primitive("bytes", field="value")],
        name=VARIABLE_DECIMAL_NAME,
        version=1,
        doc="Variable scaled decimal",
    ),
    "string_to_optional_string": ConnectSchema(
        type="map", keys=primitive("string"), values=primitive("string", optional=True)
    ),
}


def row_schema(row: TypeRow, sql_type: SqlType, settings: Mapping[str, str]) -> ConnectSchema:
    """The Connect schema ``row`` gives a (non-array) column of ``sql_type``."""
    kind, _, shape = row.connect.partition(":")
    if shape:
        return SHAPES[shape]
    params = {key: _fill(template, sql_type, settings) for key, template in row.params}
    return primitive(
        kind,
        name=row.name,
        version=1 if row.name else None,
        parameters=params or None,
    )


def _fill(template: str, sql_type: SqlType, settings: Mapping[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        key = match.group(1)
        if key == "length":
            return str(sql_type.length)
        if key == "scale":
            return str(sql_type.scale if sql_type.scale is not None else 0)
        if key == "values":
            return ",".join(sql_type.args)
        return settings[key]

    return re.sub(r"\{([a-z_.]+)\}", value, template)


def rows_for(rows: Sequence[TypeRow], type_name: str) -> list[TypeRow]:
    """The rows that mention ``type_name`` (for documentation and tests)."""
    return [r for r in rows if type_name in r.types]
