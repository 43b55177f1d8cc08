"""``decode_changes``: any format's Kafka-shaped DataFrame → the canonical change feed."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from pyspark.errors import PySparkAttributeError
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from contracts.contract import Contract
from contracts.formats._typing import TEXT_WHITESPACE
from contracts.routing import Unmatched
from spark_bindings.build import decoder_for
from spark_bindings.context import Context
from spark_bindings.expressions import Problem, problem_text, stripped
from spark_bindings.feed import CANONICAL, LAST_COLUMNS, PARSED_COL, Feed, finish
from spark_bindings.frame import Frame, StepCache, replay
from spark_bindings.parse import Decoder
from spark_bindings.schema import as_contract, quoted
from spark_bindings.session import HOTSPOT_HUGE_METHOD, HUGE_METHOD_CONF, interpreted_methods_risk

#: Working columns: the message did not parse; the message was present (not a tombstone).
UNPARSED_COL = "__cdc_unparsed"
PRESENT_COL = "__cdc_present"
#: Working column: why the message is not Unicode text (not UTF-8, a lone surrogate escape).
NOT_TEXT_COL = "__cdc_not_text"
#: Working column: why the message did not parse, with JSON paths (null when it parsed).
REPORT_COL = "__cdc_parse_report"
#: Working columns: the message goes on after its JSON object; its parse failed.
TRAILING_COL = "__cdc_trailing"
PARSE_FAILED_COL = "__cdc_parse_failed"
TRAILING: Final = "is not valid JSON (content after the document)"

#: The recorded steps of recent JSON decodes, per contract and input columns.
_STEPS = StepCache()
#: The Spark applications already warned about their generated-method limit.
_WARNED: set[str | None] = set()
_LOG = logging.getLogger(__name__)


def decode_changes(
    df: DataFrame,
    contract: Contract | str | Path | Sequence[Contract | str | Path],
    *,
    value_col: str = "value",
    key_col: str = "key",
    drop_control_records: bool = False,
    table_include: str | None = None,
    database_include: str | None = None,
    unmatched: Unmatched | None = None,
    **options: Any,
) -> DataFrame:
    """Decode a Kafka-shaped DataFrame (binary or string ``value``/``key``) with a contract.

    Several contracts (a list, or a directory of contract files) decode a multi-table topic:
    each message with its table's contract, in ONE feed whose ``key``/``before``/``after``
    hold every contract's columns (see :func:`spark_bindings.routing.decode_changes_by_table`
    for one feed per table, and for ``table_include``/``database_include``/``unmatched``,
    which also apply to one contract).

    Output: ``op, table, key, before, after, ts_ms, source_ts_ms, position``, every other input
    column unchanged, ``_control`` (tombstone/heartbeat/ddl/... or null) and ``_error`` (null
    when the row decoded, otherwise why). Rows in = rows out, except Canal (one row per element
    of ``data``); control records are kept unless ``drop_control_records``. Works on batch and
    streaming DataFrames. Avro-encoded topics (``dts-avro``, or ``encoding="avro"`` / the contract
    option ``value_encoding: avro`` for Confluent-framed Connect envelopes) accept ``registry=``
    (a URL, a config dict or a SchemaRegistryClient); envelopes are read with spark-avro's
    ``from_avro`` when it is on the classpath (``use_spark_avro=``; plan the writer schema ids
    with ``writer_ids=`` or ``subject=``, required on a stream), else with fastavro.

    Building a JSON decode takes a second or two of Py4J calls; the result is kept per contract
    and input columns (in this Spark application), so a later call, e.g. on each micro-batch in
    ``foreachBatch``, reuses it.
    """
    from spark_bindings.avro import decode_avro, wants_avro

    _check_options(options)
    _check_column_names(df, value_col, key_col)
    routed = table_include is not None or database_include is not None
    if routed or unmatched is not None or _several(contract):
        from spark_bindings.routing import decode_changes_by_table, union_feed

        if options:
            raise ValueError("decoding several tables takes JSON formats only (no Avro options)")
        feeds = decode_changes_by_table(
            df,
            contract
            if isinstance(contract, Sequence) and not isinstance(contract, str)
            else [contract],
            table_include=table_include,
            database_include=database_include,
            unmatched=unmatched,
            value_col=value_col,
            key_col=key_col,
            drop_control_records=drop_control_records,
        )
        return union_feed(feeds)
    assert not isinstance(contract, Sequence) or isinstance(contract, str)
    ctx = Context(as_contract(contract))
    name = ctx.contract.format
    if wants_avro(ctx.contract, options):
        return decode_avro(df, ctx, value_col, key_col, drop_control_records, **options)
    key = _steps_key(df, ctx, value_col, key_col, drop_control_records)
    steps = _STEPS.get(key)
    if steps is None:
        _warn_about_method_limit(df)
        decoder = decoder_for(name)
        ctx = Context(ctx.contract, strip_staged_texts=True)
        built = decode_json_frame(Frame(df), ctx, decoder, value_col, key_col, drop_control_records)
        _STEPS.put(key, built.steps)
        return built.df
    return replay(steps, df)


#: The keyword options of ``decode_changes`` beyond its named parameters (Avro topics).
AVRO_OPTIONS: Final = frozenset(
    {
        "registry",
        "encoding",
        "use_spark_avro",
        "writer_ids",
        "subject",
        "key_writer_ids",
        "key_subject",
    }
)


def _several(contract: object) -> bool:
    """Whether ``contract`` names several contracts: a list, or a directory."""
    if isinstance(contract, str | Path):
        return Path(contract).is_dir()
    return isinstance(contract, Sequence)


def _check_options(options: dict[str, Any]) -> None:
    """A misspelt option is an error, not silently ignored (``drop_control=True`` would
    otherwise keep the control records)."""
    known = [
        *AVRO_OPTIONS,
        "value_col",
        "key_col",
        "drop_control_records",
        "table_include",
        "database_include",
        "unmatched",
    ]
    for name in options:
        if name not in AVRO_OPTIONS:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(f"decode_changes() got an unexpected keyword argument {name!r}{hint}")


def _check_column_names(df: DataFrame, value_col: str, key_col: str) -> None:
    """An input column passed through under the name of a feed column would make two columns
    of one name (and Spark refuse every later reference to it)."""
    ours = {*CANONICAL, *LAST_COLUMNS}
    clash = [c for c in passthrough_columns(df, value_col, key_col) if c in ours]
    if clash:
        names = ", ".join(repr(c) for c in clash)
        raise ValueError(
            f"input column(s) {names} have the name of a change-feed column: rename or drop "
            f"them first (e.g. df.withColumnRenamed({clash[0]!r}, 'input_{clash[0]}'))"
        )


def passthrough_columns(df: DataFrame | Frame, value_col: str, key_col: str) -> list[str]:
    """The input columns kept unchanged: all but the raw key and value."""
    return [c for c in df.columns if c not in (value_col, key_col)]


def _steps_key(
    df: DataFrame, ctx: Context, value_col: str, key_col: str, drop_control_records: bool
) -> tuple[object, ...]:
    """What a recorded decode depends on: the contract, the input's columns and types, the
    options, and the Spark application whose JVM holds the recorded expressions."""
    return (
        ctx.contract.model_dump_json(),
        tuple(df.dtypes),
        value_col,
        key_col,
        drop_control_records,
        _application(df),
    )


def _warn_about_method_limit(df: DataFrame) -> None:
    """Once per application: say so when Spark may fuse a decode into a method too large for
    HotSpot to compile (it would run interpreted, 1.3-2x slower)."""
    app = _application(df)
    if app in _WARNED:
        return
    _WARNED.add(app)
    if interpreted_methods_risk(df.sparkSession):
        _LOG.warning(
            "%s is above %d: a decode whose generated method outgrows HotSpot's JIT limit runs "
            "interpreted (a narrow query over a wide contract can: ~1.3x slower); set it to %d "
            "(docs/spark.md, Performance)",
            HUGE_METHOD_CONF,
            HOTSPOT_HUGE_METHOD,
            HOTSPOT_HUGE_METHOD,
        )


def _application(df: DataFrame) -> str | None:
    """The Spark application of ``df`` (None on Spark Connect, whose Columns hold no JVM
    objects)."""
    try:
        return df.sparkSession.sparkContext.applicationId
    except PySparkAttributeError:
        return None


def decode_json_frame(
    df: Frame,
    ctx: Context,
    decoder: Decoder,
    value_col: str,
    key_col: str,
    drop_control_records: bool,
) -> Frame:
    """The feed of ``df`` through ``decoder``: its working columns, one parse per message,
    the explode, the staged texts and values, then :func:`~spark_bindings.feed.finish`."""
    keep = passthrough_columns(df, value_col, key_col)
    text = F.col(quoted(value_col)).cast("string")
    has_key = decoder.uses_key and key_col in df.columns
    key_text = F.col(quoted(key_col)).cast("string") if has_key else None
    # The decoder's working columns (generated code), then the parse; the raw value is not
    # carried past the parse (every later stage would copy it), only whether it was present.
    prepared = decoder.prepare(
        df.select("*", _present(decoder, F.col(quoted(value_col))).alias(PRESENT_COL)), text, ctx
    )
    carried = [c for c in df.columns if c != value_col] + [PRESENT_COL]
    parse_expr = decoder.parse(text, ctx)
    early = _texts_over_parse(decoder, parse_expr, key_text, ctx)
    report = decoder.parse_report(parse_expr, ctx)
    parsed = prepared.select(
        *[F.col(quoted(c)) for c in carried],
        *[v.alias(k) for k, v in decoder.parse_columns(parse_expr, ctx).items()],
        *[v.alias(k) for k, v in early.items()],
        *([report.alias(REPORT_COL)] if report is not None else []),
        decoder.unreadable(text, ctx).alias(NOT_TEXT_COL),
        _trailing(decoder, text).alias(TRAILING_COL),
    )
    parsed = decoder.explode(parsed, F.col(PARSED_COL), ctx)
    j = F.col(PARSED_COL)
    present = F.col(PRESENT_COL)
    feed = decoder.feed(j, key_text, ctx)
    parse = decoder.parse_problem(present, j)
    if early:
        assert list(early) == list(ctx.texts), "texts staged in a different order"
    elif ctx.texts:
        parsed = parsed.select("*", *[v.alias(k) for k, v in ctx.texts.items()])
    not_text, trailing = F.col(NOT_TEXT_COL).isNotNull(), F.col(TRAILING_COL)
    parse_failed = F.coalesce(parse.condition, F.lit(False))
    layers = ctx.staged_layers() or [{}]
    for layer in layers[:-1]:
        parsed = parsed.select("*", *[v.alias(k) for k, v in layer.items()])
    parsed = parsed.select(
        "*",
        *[v.alias(k) for k, v in layers[-1].items()],
        (parse_failed | not_text | trailing).alias(UNPARSED_COL),
        parse_failed.alias(PARSE_FAILED_COL),
    )
    said = problem_text(parse)
    if report is not None:
        said = F.coalesce(F.col(REPORT_COL), said)
    # bytes first, then what the parse found; text after a document that parsed last
    said = (
        F.when(not_text, F.concat(F.lit("$: "), F.col(NOT_TEXT_COL)))
        .when(~F.col(PARSE_FAILED_COL) & trailing, F.lit(f"$: {TRAILING}"))
        .otherwise(said)
    )
    parse = Problem("", said, F.col(UNPARSED_COL))  # the text names its own paths
    tombstone = ~present
    feed = Feed(
        op=feed.op,
        table=F.when(present, feed.table),
        key=feed.key,
        before=feed.before,
        after=feed.after,
        ts_ms=feed.ts_ms,
        source_ts_ms=feed.source_ts_ms,
        position=F.when(present, feed.position),
        control=F.when(tombstone, F.lit("tombstone")).otherwise(feed.control),
        problems=(
            *_after_parse(parse, feed.problems, tombstone),
            *[p.gated(tombstone) for p in feed.key_problems],
            *_key_text(decoder, key_text),
        ),
        element=feed.element,
        element_arrays=feed.element_arrays,
        absent=feed.absent,
    )
    return finish(
        parsed,
        feed,
        keep,
        drop_control_records=drop_control_records,
        key_type=ctx.key_type,
        row_type=ctx.row_type,
    )


def _present(decoder: Decoder, value: Column) -> Column:
    """Whether a message is there: a null value is a tombstone, and so are an empty one and
    JSON ``null`` for a JSON format (as Kafka's JsonConverter and the Python decoder read
    them)."""
    if not decoder.object_messages:
        return value.isNotNull()
    # whitespace around counts as nothing, as in the core; only a short value can be one
    # (trimming a long message would copy it)
    blank = (F.octet_length(value) <= 16) & stripped(value.cast("string")).isin("", "null")
    return value.isNotNull() & ~F.coalesce(blank, F.lit(False))


def _trailing(decoder: Decoder, text: Column) -> Column:
    """Whether a message meant to be one JSON object goes on after it (Spark's parser stops at
    the first value and would silently ignore the rest). Only a text that does not end with
    ``}`` is caught: ``{..}{..}`` is not (see docs/spark.md, Known differences)."""
    if not decoder.object_messages:
        return F.lit(False)
    brace = F.lit("}")
    # a byte compare at the end first: trimming scans the whole text for its characters (4 KB
    # Debezium messages: 17 µs each), so only a message not ending in "}" is trimmed
    trimmed = F.endswith(F.rtrim(text, F.lit(TEXT_WHITESPACE)), brace)
    return F.coalesce(~F.endswith(text, brace) & ~trimmed, F.lit(False))


def _texts_over_parse(
    decoder: Decoder, parse_expr: Column, key_text: Column | None, ctx: Context
) -> dict[str, Column]:
    """The wire texts of a format that takes them from the parse (``texts_from_parse``),
    written over the parse itself.

    They then come out of the parse projection, where Spark computes the parse once for all of
    them and compiles each into a method of its own, instead of adding their code to the
    decode stage's generated method (which must stay under the JIT's 8,000-byte limit). The
    feed is built a second time over the parse only to collect the texts; they are staged in
    the same order, under the same names, as in the real feed."""
    if not decoder.texts_from_parse:
        return {}
    probe = Context(ctx.contract, strip_staged_texts=ctx.strip_staged_texts, over_parse=parse_expr)
    decoder.feed(parse_expr, key_text, probe)
    return probe.texts


def _key_text(decoder: Decoder, key_text: Column | None) -> tuple[Problem, ...]:
    """A Kafka key that is not Unicode text (its JSON would be read with U+FFFD or ``?``)."""
    if key_text is None:
        return ()
    why = decoder.key_unreadable(key_text)
    return (Problem("$key", why, why.isNotNull()),)


def _after_parse(
    parse: Problem, problems: tuple[Problem, ...], tombstone: Any
) -> tuple[Problem, ...]:
    """The parse problem first; the others only count when the message parsed."""
    parsed_ok = ~tombstone & ~F.coalesce(parse.condition, F.lit(False))
    gated = tuple(p.gated(parsed_ok) for p in problems)
    return (Problem(parse.path, parse.message, ~tombstone & parse.condition), *gated)
