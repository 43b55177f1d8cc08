"""The format registry: names as users say them, mapped to modules loaded on first use.

How to add a format (docs/development.md walks through it end to end)
----------------------------------------------------------------------
1. Write ``contracts/formats/<module>.py``: the format's facts as a
   :class:`~contracts.formats.spec.FormatSpec` (op codes, controls, images and how their values
   are written, table, times, position, key) and one subclass of
   :class:`contracts.formats.base.Format` carrying it as ``spec`` (set ``name``,
   ``description``, ``embedded_schema`` and, for non-JSON input, ``input_kind``) that
   implements ``detect``, ``infer``, ``derive``, ``validate`` and ``normalize`` reading those
   tables.
2. Add one line to :data:`FORMATS` below: ``"<name>": Entry("<module>", "<ClassName>")``. The
   Spark decoder is built from the spec (``spark_bindings.build``); only a format needing an
   expression the tables cannot say names its Spark module (``spark_bindings/formats/<x>.py``)
   as ``spark="<x>"``.
3. Put sample messages under ``tests/fixtures/<name>/`` with the expected contract and events,
   a ``tests/formats/test_<module>.py`` on the shared ``FormatSpec`` base, and the format's
   message strategies in ``tests/parity/`` (the Python and Spark paths must agree).

Nothing else changes: the CLI, the API and the Spark bindings look formats up here.
"""

from __future__ import annotations

import difflib
import importlib
import itertools
from collections.abc import Iterable
from typing import Final, NamedTuple

from contracts.errors import DetectionError, UnknownFormatError
from contracts.formats.base import Format, Message


class Entry(NamedTuple):
    """One registered format: its module under ``contracts.formats`` and class, and the module
    under ``spark_bindings.formats`` holding what its Spark decoder cannot build from the
    format's tables (None: none needed)."""

    module: str
    cls: str
    spark: str | None = None


#: name → where the format is defined. Order is the listing order.
FORMATS: Final[dict[str, Entry]] = {
    "debezium-json": Entry("debezium_json", "DebeziumJson"),
    "debezium-mongodb-json": Entry(
        "debezium_mongodb_json", "DebeziumMongodbJson", spark="debezium_mongodb_json"
    ),
    "arcion-json": Entry("arcion_json", "ArcionJson"),
    "cdl-json": Entry("cdl_json", "CdlJson"),
    "cdl-debezium-json": Entry("cdl_debezium_json", "CdlDebeziumJson"),
    "arcion-s3-json": Entry("arcion_s3_json", "ArcionS3Json"),
    "arcion-s3-csv": Entry("arcion_s3_csv", "ArcionS3Csv", spark="arcion_s3_csv"),
    "shareplex-json": Entry("shareplex_json", "ShareplexJson", spark="shareplex_json"),
    "canal-json": Entry("canal_json", "CanalJson"),
    "dts-avro": Entry("dts_avro", "DtsAvro"),
    "opencdc-json": Entry("opencdc_json", "OpencdcJson", spark="opencdc_json"),
    "maxwell-json": Entry("maxwell_json", "MaxwellJson"),
    "ogg-json": Entry("ogg_json", "OggJson"),
}

_loaded: dict[str, Format] = {}


def format_names() -> list[str]:
    """Every registered format name, in listing order."""
    return list(FORMATS)


def check_format_name(name: str) -> None:
    """Raise :class:`UnknownFormatError` (with the closest match) unless ``name`` is
    registered."""
    if name not in FORMATS:
        close = difflib.get_close_matches(name, FORMATS, n=1, cutoff=0.4)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownFormatError(f"unknown format {name!r}{hint} (known: {', '.join(FORMATS)})")


def get_format(name: str) -> Format:
    """The format called ``name``; an unknown name is answered with the closest match."""
    found = _loaded.get(name)
    if found is not None:
        return found
    check_format_name(name)
    entry = FORMATS[name]
    module = importlib.import_module(f"contracts.formats.{entry.module}")
    instance: Format = getattr(module, entry.cls)()
    _loaded[name] = instance
    return instance


def all_formats() -> list[Format]:
    """Every registered format, loaded."""
    return [get_format(n) for n in FORMATS]


def candidates(message: Message, formats: Iterable[Format] | None = None) -> list[str]:
    """Names of the formats whose ``detect`` accepts ``message``."""
    return [f.name for f in (formats or all_formats()) if _safe_detect(f, message)]


#: How many leading messages auto-detection looks at.
DETECT_SAMPLE: Final = 20


def formats_reading(kind: str | None = None) -> list[Format]:
    """Registered formats (reading ``kind`` input — json, csv or avro — when given)."""
    return [f for f in all_formats() if kind is None or f.input_kind == kind]


def detect_format(
    raw: Iterable[Message], kind: str | None = None, *, where: str = "input"
) -> Format:
    """The unique format whose ``detect`` accepts every leading message it assembles; when
    none accepts them all, the unique format accepting the most of them, if that is at least
    half (a damaged message among the first ones must not hide the format of the others:
    it is reported where it is read).

    ``raw`` holds input documents as read (before a format pairs or splits them); ``kind``
    limits the candidates to formats reading that input kind. Raises :class:`DetectionError`
    naming the candidates when none or several match.
    """
    sample = list(itertools.islice(raw, DETECT_SAMPLE))
    if not sample:
        raise DetectionError("no messages to detect a format from", where)
    where = sample[0].where if where == "input" else where
    formats = formats_reading(kind)
    shares = {f.name: _share_accepted(f, sample) for f in formats}
    matching = [f for f in formats if shares[f.name] == 1.0]
    if len(matching) == 1:
        return matching[0]
    if not matching:
        best = max(shares.values(), default=0.0)
        leaders = [f for f in formats if shares[f.name] == best]
        if best >= 0.5 and len(leaders) == 1:
            return leaders[0]
    names = ", ".join(f.name for f in (matching or formats))
    if not matching:
        what = f"known {kind} formats" if kind else "known formats"
        raise DetectionError(
            f"the input matches none of the {what} ({names}); pass --format NAME", where
        )
    raise DetectionError(f"the input is ambiguous between {names}; pass --format NAME", where)


def _share_accepted(fmt: Format, sample: list[Message]) -> float:
    """The share of the sample's messages, as ``fmt`` assembles them, that it accepts (0 when
    it assembles none; an assembling error counts as a message it does not accept)."""
    assembled: list[Message] = []
    failures: list[Exception] = []
    try:
        for message in itertools.islice(fmt.assemble(iter(sample), failures.append), DETECT_SAMPLE):
            if message.value is not None:
                assembled.append(message)
    except Exception:
        pass
    if not assembled:
        return 0.0
    accepted = sum(1 for m in assembled if _safe_detect(fmt, m))
    return accepted / (len(assembled) + len(failures))


def _safe_detect(fmt: Format, message: Message) -> bool:
    try:
        return bool(fmt.detect(message))
    except Exception:
        return False
