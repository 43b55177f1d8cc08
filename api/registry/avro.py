"""Schema texts as the registry keeps them: parsed, checked and canonicalized.

Two registrations are the same schema when their parsed Avro is the same, whatever the
whitespace, key order or name shorthand (``"x.y.In"`` vs ``"In"`` inside namespace ``x.y``).
The registry stores the compact canonical JSON the Avro library writes back and deduplicates
on a key-sorted form of it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import avro.errors
import avro.schema

from api.registry.errors import RegistryError, invalid_schema

SUPPORTED_TYPES: Final = ("AVRO",)
KNOWN_TYPES: Final = ("AVRO", "JSON", "PROTOBUF")


@dataclass(frozen=True, slots=True)
class CanonicalSchema:
    """A parsed schema: the text the registry answers with and its identity fingerprint."""

    schema_type: str
    text: str
    fingerprint: str


def check_type(schema_type: str | None) -> str:
    """The schema type of a request (``AVRO`` when absent); others answer 42201."""
    value = (schema_type or "AVRO").upper()
    if value not in SUPPORTED_TYPES:
        known = "known" if value in KNOWN_TYPES else "unknown"
        raise invalid_schema(
            f"schemaType {value} ({known}) is not supported by this registry; only AVRO is"
        )
    return value


@lru_cache(maxsize=4096)
def canonicalize(schema_text: str, schema_type: str = "AVRO") -> CanonicalSchema:
    """Parse an Avro schema text; raise 42201 when it is not valid Avro."""
    check_type(schema_type)
    try:
        parsed = avro.schema.parse(schema_text)
    except (avro.errors.AvroException, json.JSONDecodeError, TypeError, ValueError) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        raise invalid_schema(reason) from None
    as_json = parsed.to_json()
    text = json.dumps(as_json, separators=(",", ":"), ensure_ascii=False)
    return CanonicalSchema("AVRO", text, fingerprint_of(as_json))


def fingerprint_of(value: Any) -> str:
    """A stable digest of a JSON value (object keys sorted)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str | None:
    """Key-sorted compact JSON text of an optional value (None stays None)."""
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def check_request_schema(body: Any) -> tuple[str, str]:
    """The schema text and type of a register / lookup / compatibility request body."""
    if not isinstance(body, dict):
        raise RegistryError(422, "The request body must be a JSON object")
    schema = body.get("schema")
    if not isinstance(schema, str) or not schema.strip():
        raise RegistryError(422, "Field 'schema' is required and must be a string")
    schema_type = body.get("schemaType")
    if schema_type is not None and not isinstance(schema_type, str):
        raise RegistryError(422, "Field 'schemaType' must be a string")
    references = body.get("references") or []
    if references:
        raise invalid_schema("schema references are not supported by this registry")
    return schema, check_type(schema_type)
