"""``arcion-json``: Arcion Replicant's JSON CDC format for Kafka.

A Debezium-like envelope with Arcion's quirks: the key and the value are separate
``{schema, payload}`` documents (paired by :meth:`ArcionJson.assemble`), ``"before": {}`` and
``"after": {}`` mean *no image*, snapshot rows carry op ``r``, every delete is followed by a
tombstone (the key document, then ``null``), and an update of key columns arrives as a delete
followed by an insert. The source struct is named after the Replicant connector
(``KAFKA_Connector``) and the schemas after ``<connector>.<db>.<table>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any, ClassVar, Final

from contracts.errors import InputError
from contracts.formats._connect import checked, is_arcion_envelope, is_envelope_schema, raw_field
from contracts.formats.base import EmbeddedSchema, InputErrorSink, Message
from contracts.formats.debezium_json import SPEC as DEBEZIUM_SPEC
from contracts.formats.debezium_json import DebeziumJson
from contracts.formats.spec import Connect, FormatSpec

#: Debezium's envelope, with ``{}`` as no image and the schema half always there.
SPEC: Final = replace(
    DEBEZIUM_SPEC,
    connect=Connect(),
    images=replace(DEBEZIUM_SPEC.images, empty_is_absent=True),
)


def is_key_document(value: Any) -> bool:
    """A ``{schema, payload}`` document whose struct is a key (no envelope ``op`` field)."""
    if not isinstance(value, dict) or set(value) != {"schema", "payload"}:
        return False
    schema = value["schema"]
    return (
        is_envelope_schema(schema, ())
        and str(schema.get("name", "")).endswith(".Key")
        and raw_field(schema, "op") is None
        and isinstance(value["payload"], dict)
    )


class ArcionJson(DebeziumJson):
    """Arcion Replicant JSON CDC (separate key and value documents)."""

    name = "arcion-json"
    description = "Arcion Replicant JSON CDC for Kafka (key and value documents, Connect schemas)"
    embedded_schema: ClassVar[EmbeddedSchema] = "yes"
    default_layout: ClassVar[tuple[str, ...]] = ("before", "after", "source", "op", "ts_ms")
    spec: ClassVar[FormatSpec] = SPEC

    def detect(self, message: Message) -> bool:
        value = message.value
        if not isinstance(value, dict) or "schema" not in value or "payload" not in value:
            return False
        if is_key_document(value):
            return True
        return checked(lambda: self._is_arcion(value["schema"], value["payload"]))

    @staticmethod
    def _is_arcion(schema: Any, payload: Any) -> bool:
        return (
            isinstance(payload, dict)
            and is_envelope_schema(schema, ("op", "source", "before", "after"))
            and is_arcion_envelope(schema, payload)
        )

    def assemble(
        self, messages: Iterable[Message], on_error: InputErrorSink | None = None
    ) -> Iterator[Message]:
        """Pair each key document with the value document (or ``null`` tombstone) after it; a
        key document without one is an error, and pairing goes on with the next document."""
        pending: Message | None = None
        for message in messages:
            if message.has_key:
                yield message
                continue
            if is_key_document(message.value):
                if pending is not None:
                    what = "a key document is followed by another key document, not by its value"
                    _refuse(InputError(what, pending.where), on_error)
                pending = message
                continue
            if pending is None:
                yield message
                continue
            yield Message(
                value=message.value,
                key=pending.value,
                where=message.where,
                meta=message.meta,
                has_key=True,
            )
            pending = None
        if pending is not None:
            what = "the last key document has no value document after it"
            _refuse(InputError(what, pending.where), on_error)


def _refuse(err: InputError, on_error: InputErrorSink | None) -> None:
    if on_error is None:
        raise err
    on_error(err)
