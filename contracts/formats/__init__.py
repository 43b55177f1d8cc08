"""The format registry: names as users say them, mapped to modules loaded on first use.

How to add a format
-------------------
1. Write ``contracts/formats/<module>.py`` with one subclass of
   :class:`contracts.formats.base.Format` named in :data:`FORMATS` (set ``name``,
   ``description``, ``embedded_schema`` and, for non-JSON input, ``input_kind``) and implement
   ``detect``, ``infer``, ``derive``, ``validate`` and ``normalize``.
2. Add one line to :data:`FORMATS` below: ``"<name>": ("<module>", "<ClassName>")``.
3. Put sample messages under ``tests/fixtures/<name>/`` with the expected contract and events,
   and a ``tests/formats/test_<module>.py`` on the shared ``FormatSpec`` base.

Nothing else changes: the CLI, the API and the Spark bindings look formats up here.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable
from typing import Final

from contracts.errors import DetectionError, UnknownFormatError
from contracts.formats.base import Format, Message

#: name → (module under contracts.formats, class name). Order is the listing order.
FORMATS: Final[dict[str, tuple[str, str]]] = {
    "debezium-json": ("debezium_json", "DebeziumJson"),
    "arcion-json": ("arcion_json", "ArcionJson"),
    "cdl-json": ("cdl_json", "CdlJson"),
    "cdl-debezium-json": ("cdl_debezium_json", "CdlDebeziumJson"),
    "arcion-s3-json": ("arcion_s3_json", "ArcionS3Json"),
    "arcion-s3-csv": ("arcion_s3_csv", "ArcionS3Csv"),
    "shareplex-json": ("shareplex_json", "ShareplexJson"),
    "canal-json": ("canal_json", "CanalJson"),
    "dts-avro": ("dts_avro", "DtsAvro"),
    "opencdc-json": ("opencdc_json", "OpencdcJson"),
}

_loaded: dict[str, Format] = {}


def format_names() -> list[str]:
    """Every registered format name, in listing order."""
    return list(FORMATS)


def get_format(name: str) -> Format:
    """The format called ``name``; an unknown name is answered with the closest match."""
    found = _loaded.get(name)
    if found is not None:
        return found
    entry = FORMATS.get(name)
    if entry is None:
        close = difflib.get_close_matches(name, FORMATS, n=1, cutoff=0.4)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownFormatError(f"unknown format {name!r}{hint} (known: {', '.join(FORMATS)})")
    module_name, class_name = entry
    module = importlib.import_module(f"contracts.formats.{module_name}")
    instance: Format = getattr(module, class_name)()
    _loaded[name] = instance
    return instance


def all_formats() -> list[Format]:
    """Every registered format, loaded."""
    return [get_format(n) for n in FORMATS]


def candidates(message: Message, formats: Iterable[Format] | None = None) -> list[str]:
    """Names of the formats whose ``detect`` accepts ``message``."""
    return [f.name for f in (formats or all_formats()) if _safe_detect(f, message)]


def detect_format(messages: Iterable[Message], sample: int = 20) -> Format:
    """The unique format matching the first non-tombstone messages.

    Raises :class:`DetectionError` naming the candidates when the answer is not unique.
    """
    remaining: set[str] | None = None
    where = "input"
    seen = 0
    for message in messages:
        if message.value is None:
            continue
        where = message.where
        names = set(candidates(message))
        remaining = names if remaining is None else remaining & names
        seen += 1
        if seen >= sample or (remaining is not None and len(remaining) <= 1):
            break
    if remaining is None:
        raise DetectionError("no messages to detect a format from", where)
    if len(remaining) == 1:
        return get_format(next(iter(remaining)))
    if not remaining:
        raise DetectionError(
            "the input matches none of the known formats "
            f"({', '.join(FORMATS)}); pass --format NAME",
            where,
        )
    ordered = [n for n in FORMATS if n in remaining]
    raise DetectionError(
        f"the input is ambiguous between {', '.join(ordered)}; pass --format NAME", where
    )


def _safe_detect(fmt: Format, message: Message) -> bool:
    try:
        return bool(fmt.detect(message))
    except Exception:
        return False
