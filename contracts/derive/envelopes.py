"""The envelope Debezium writes around a row, per connector and version: fields, names, ``source``.

Only versions whose envelope this project has seen are built in, each with its evidence:

- ``1.1``: real Debezium 1.1.1 MySQL and 1.2.1 PostgreSQL messages (apache/flink
  ``flink-formats/flink-json/src/test/resources/debezium-data-schema-include.txt`` and
  ``debezium-postgres-data-schema-include.txt``): no ``sequence``, snapshot ``true,last,false``,
  ``transaction`` last and unnamed.
- ``1.9``: real Debezium 1.9.7 / 1.9.5 MySQL messages (apache/paimon ``paimon-flink-cdc`` test
  resource ``debezium-alltype-data-1.txt``; risingwave ``debezium_log.1``): ``sequence`` after
  ``db``, snapshot ``true,last,false,incremental``.
- ``3.0`` and later: Debezium's current code (debezium-core ``SchemaFactory``: source struct
  version 1 with ``ts_us``/``ts_ns``, snapshot enum of ``SnapshotRecord`` (7 values), envelope
  version 2 with ``ts_us``/``ts_ns`` after ``ts_ms``, the ``event.block`` transaction block
  appended last).

For any other version, or to copy an envelope exactly, pass a message the connector wrote:
:func:`profile_from_message` takes the layout, ``source`` and ``transaction`` blocks from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from contracts.derive.typemap import Version, show_version
from contracts.errors import InputError, SchemaError
from contracts.logical import ENUM_NAME
from contracts.schema import ConnectSchema, parse_connect, primitive, struct

_STRING: Final = primitive("string")
_OPT_STRING: Final = primitive("string", optional=True)
_INT64: Final = primitive("int64")
_OPT_INT64: Final = primitive("int64", optional=True)
_INT32: Final = primitive("int32")

SNAPSHOT_1_1: Final = "true,last,false"
SNAPSHOT_1_9: Final = "true,last,false,incremental"
SNAPSHOT_3: Final = (
    "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"
)


@dataclass(frozen=True, slots=True)
class EnvelopeProfile:
    """What a connector version puts around the row: field order, blocks, envelope version."""

    label: str
    layout: tuple[str, ...]
    source: ConnectSchema
    transaction: ConnectSchema
    envelope_version: int | None = None
    connector: str | None = None


def _snapshot(values: str) -> ConnectSchema:
    return ConnectSchema(
        type="string",
        optional=True,
        name=ENUM_NAME,
        version=1,
        parameters=(("allowed", values),),
        default="false",
    )


def _fields(*pairs: tuple[str, ConnectSchema]) -> list[ConnectSchema]:
    return [schema.as_field(name) for name, schema in pairs]


def _common(label: str) -> list[ConnectSchema]:
    """The fields every connector's ``source`` block starts with."""
    head = [("version", _STRING), ("connector", _STRING), ("name", _STRING), ("ts_ms", _INT64)]
    if label == "1.1":
        return _fields(*head, ("snapshot", _snapshot(SNAPSHOT_1_1)), ("db", _STRING))
    if label == "1.9":
        return _fields(
            *head, ("snapshot", _snapshot(SNAPSHOT_1_9)), ("db", _STRING), ("sequence", _OPT_STRING)
        )
    return _fields(
        *head,
        ("snapshot", _snapshot(SNAPSHOT_3)),
        ("db", _STRING),
        ("sequence", _OPT_STRING),
        ("ts_us", _OPT_INT64),
        ("ts_ns", _OPT_INT64),
    )


#: Each connector's own ``source`` fields (after the common ones).
_CONNECTOR_FIELDS: Final = {
    "mysql": _fields(
        ("table", _OPT_STRING),
        ("server_id", _INT64),
        ("gtid", _OPT_STRING),
        ("file", _STRING),
        ("pos", _INT64),
        ("row", _INT32),
        ("thread", _OPT_INT64),
        ("query", _OPT_STRING),
    ),
    "postgresql": _fields(
        ("schema", _STRING),
        ("table", _STRING),
        ("txId", _OPT_INT64),
        ("lsn", _OPT_INT64),
        ("xmin", _OPT_INT64),
    ),
}

_TX_FIELDS: Final = _fields(
    ("id", _STRING), ("total_order", _INT64), ("data_collection_order", _INT64)
)
_LAYOUT_1: Final = ("before", "after", "source", "op", "ts_ms", "transaction")
_LAYOUT_3: Final = ("before", "after", "source", "op", "ts_ms", "ts_us", "ts_ns", "transaction")

#: (label, first version, first version after) of the built-in profiles.
BUILT_IN: Final[tuple[tuple[str, Version, Version], ...]] = (
    ("1.1", (1, 1), (1, 3)),
    ("1.9", (1, 9), (2, 0)),
    ("3.0", (3, 0), (1_000_000, 1)),
)


def builtin_profile(connector: str, version: Version) -> EnvelopeProfile:
    """The built-in envelope of ``connector`` at ``version``; an unknown version is an error."""
    for label, first, after in BUILT_IN:
        if first <= version < after:
            return _profile(connector, label)
    known = ", ".join(f"{label}" if label != "3.0" else "3.0 and later" for label, _, _ in BUILT_IN)
    raise InputError(
        f"no built-in envelope for Debezium {show_version(version)} (built in: {known}); pass "
        "--envelope-from with a message your connector wrote to copy its envelope exactly",
        "--debezium-version",
    )


def _profile(connector: str, label: str) -> EnvelopeProfile:
    source_name = f"io.debezium.connector.{connector}.Source"
    fields = [*_common(label), *_CONNECTOR_FIELDS[connector]]
    if label in ("1.1", "1.9"):
        source = struct(fields, name=source_name)
        transaction = struct(_TX_FIELDS, optional=True)
        return EnvelopeProfile(label, _LAYOUT_1, source, transaction, None, connector)
    source = struct(fields, name=source_name, version=1)
    transaction = struct(_TX_FIELDS, optional=True, name="event.block", version=1)
    return EnvelopeProfile(label, _LAYOUT_3, source, transaction, 2, connector)


def profile_from_message(path: str | Path) -> EnvelopeProfile:
    """The envelope of the first message with an embedded schema in ``path`` (any table)."""
    from contracts.io import read_json_messages

    for message in read_json_messages(Path(path)):
        value = message.value
        if isinstance(value, dict) and isinstance(value.get("schema"), dict):
            return _profile_of(value["schema"], value.get("payload"), message.where)
    raise InputError("holds no message with an embedded schema", str(path))


def _profile_of(raw: Any, payload: Any, where: str) -> EnvelopeProfile:
    try:
        envelope = parse_connect(raw, "$.schema")
    except SchemaError as err:
        raise err.located(where) from None
    names = envelope.field_names()
    missing = [n for n in ("before", "after", "source") if n not in names]
    if envelope.type != "struct" or missing:
        raise InputError(
            f"not a Debezium envelope (no {', '.join(missing) or 'struct'} field)", where
        )
    source = envelope.require_field("source").replace(field=None)
    tx = envelope.get_field("transaction")
    connector = None
    if isinstance(payload, dict) and isinstance(payload.get("source"), dict):
        found = payload["source"].get("connector")
        connector = found if isinstance(found, str) else None
    return EnvelopeProfile(
        label=f"copied from {where}",
        layout=tuple(names),
        source=source,
        transaction=tx.replace(field=None) if tx is not None else struct(_TX_FIELDS, optional=True),
        envelope_version=envelope.version,
        connector=connector,
    )
