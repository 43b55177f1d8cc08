"""Confluent wire format: magic byte 0, the schema id as 4 bytes big-endian, then the payload."""

from __future__ import annotations

import struct
from typing import Final

from contracts.errors import InputError

MAGIC: Final = 0
HEADER: Final = struct.Struct(">bI")
HEADER_SIZE: Final = HEADER.size  # 5


def frame(schema_id: int, payload: bytes) -> bytes:
    """Prefix an encoded payload with the wire-format header for ``schema_id``."""
    if not 0 <= schema_id <= 0xFFFFFFFF:
        raise InputError(f"schema id {schema_id} does not fit in 4 bytes")
    return HEADER.pack(MAGIC, schema_id) + payload


def parse_frame(data: bytes, where: str = "message") -> tuple[int, bytes]:
    """Split a wire-format message into (schema id, payload)."""
    if len(data) < HEADER_SIZE:
        raise InputError(
            f"not Confluent wire format: {len(data)} bytes, the header alone needs {HEADER_SIZE}",
            where,
        )
    magic, schema_id = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise InputError(f"not Confluent wire format: magic byte is {magic}, expected 0", where)
    return int(schema_id), bytes(data[HEADER_SIZE:])
