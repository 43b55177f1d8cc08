"""How a message is parsed: one ``from_json`` per message with a pruned wire schema.

The interface the decode drives (:class:`Decoder`: wire schema, parse, explode, feed) and what
every format's parse shares: the parse options, the report of why a message did not parse (with
JSON paths), and the payload-only parse of ``{schema, payload}`` messages. The decoder of each
format is built from its core definition by :mod:`spark_bindings.build`.
"""

from __future__ import annotations

import re
from typing import Final

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    FractionalType,
    IntegralType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    VariantType,
)

from spark_bindings.context import Context
from spark_bindings.expressions import Problem
from spark_bindings.feed import PARSED_COL, Feed
from spark_bindings.frame import Frame

CORRUPT_COL: Final = "_corrupt_record"
BAD_JSON_COL: Final = "__cdc_bad_json"
NOT_JSON: Final = "is not valid JSON for the contract's wire schema (malformed or a wrong type)"
NOT_JSON_KEY: Final = "is not valid JSON for the contract's key (malformed or a wrong type)"
#: ``from_json`` options of every message parse: a malformed message is kept, its text in
#: ``CORRUPT_COL``.
PARSE_OPTIONS: Final = {
    "mode": "PERMISSIVE",
    "columnNameOfCorruptRecord": CORRUPT_COL,
    # JSON has no single-quoted strings (Spark's parser takes them by default)
    "allowSingleQuotes": "false",
}

S = StringType()
L = LongType()


def fields(**types: DataType) -> StructType:
    """A StructType from keyword arguments (field order kept)."""
    return StructType([StructField(name, t) for name, t in types.items()])


class Decoder:
    """What the decode asks of a format's decoder (see ``spark_bindings.decode``)."""

    #: Whether a row of this format may hold a Kafka key to decode.
    uses_key: bool = True
    #: Whether every message is one JSON object (anything after its closing brace is an error).
    object_messages: bool = True
    #: Whether the wire texts its text rules read can be computed in the parse projection:
    #: only for a format that does not explode rows and whose texts hold no second
    #: ``from_json`` (inside one, Spark would evaluate the message's parse again).
    texts_from_parse: bool = False

    def wire_schema(self, ctx: Context) -> StructType:
        raise NotImplementedError

    def prepare(self, df: Frame, text: Column, ctx: Context) -> Frame:
        """Working columns the parse reads, computed by generated code before it (none but for
        Connect envelopes)."""
        return df

    def parse_columns(self, parsed: Column, ctx: Context) -> dict[str, Column]:
        """The parse projection's columns made from the parsed message (one parse serves them
        all): the parsed struct itself but for Canal."""
        return {PARSED_COL: parsed}

    def explode(self, df: Frame, parsed: Column, ctx: Context) -> Frame:
        """One row per change (identity for every format but Canal)."""
        return df

    def feed(self, j: Column, key_text: Column | None, ctx: Context) -> Feed:
        raise NotImplementedError

    # --- shared ------------------------------------------------------------------------------

    def parse_schema(self, ctx: Context) -> StructType:
        """The wire schema plus the column that holds a message that did not parse."""
        return self.wire_schema(ctx).add(CORRUPT_COL, S)

    def parse(self, text: Column, ctx: Context) -> Column:
        return F.from_json(text, self.parse_schema(ctx), PARSE_OPTIONS)

    def parse_problem(self, present: Column, j: Column) -> Problem:
        """The message (``present``: not a tombstone) did not parse."""
        bad = present & (j.isNull() | j[CORRUPT_COL].isNotNull())
        return Problem("$", NOT_JSON, bad)

    def parse_report(self, parsed: Column, ctx: Context) -> Column | None:
        """Why a message did not parse, with JSON paths (see :func:`wire_mismatches`); null
        for a message that parsed. Computed over the parse: its own column of the parse
        projection."""
        return wire_mismatches(parsed, self.parse_schema(ctx))

    def unreadable(self, text: Column, ctx: Context) -> Column:
        """Why the part of the message the parse reads values from is not Unicode text (null
        when it is): see :func:`not_text`. A column of the parse projection."""
        return not_text(text)

    def key_unreadable(self, key_text: Column) -> Column:
        """Why the Kafka key (a JSON key is read as text) is not Unicode text, or null."""
        return not_text(key_text)


NOT_UTF8: Final = "is not UTF-8 text (an invalid byte sequence)"
LONE_SURROGATE: Final = (
    "holds a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair), which is no "
    "Unicode text"
)
#: A ``\\uD800``-``\\uDFFF`` escape without its pair (not itself escaped: an even run of
#: backslashes before it). Spark's parser would read it, and write it out as ``?``.
_LONE_SURROGATE: Final = (
    r"(?<!\\)(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\)(?<!\\u[dD][89abAB][0-9a-fA-F]{2})(?:\\\\)*\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def not_text(text: Column) -> Column:
    """Why ``text`` is not Unicode text, or null: bytes that are not UTF-8 (Spark's parser
    would read them as U+FFFD), or a lone surrogate escape (read as ``?``), which the core's
    JSON reader refuses. Only a text holding ``\\u`` is searched for the escape."""
    escaped = F.contains(text, F.lit("\\u")) & text.rlike(_LONE_SURROGATE)
    return F.when(~F.is_valid_utf8(text), F.lit(NOT_UTF8)).when(escaped, F.lit(LONE_SURROGATE))


# --- Connect envelopes: debezium-json, cdl-debezium-json, arcion-json ---------------------------


def wire_mismatches(parsed: Column, schema: StructType) -> Column:
    """On a message whose parse failed (its text in ``CORRUPT_COL``): ``$: is not valid JSON``
    when it is malformed, else every field whose JSON value is not of its wire type
    (``$.payload.after.id: "abc" is not an integer``), else :data:`NOT_JSON`.

    Spark's parse keeps what it could read (partial results) and leaves a field null where the
    value had the wrong type; a field null there but not null in the message is one. Only rows
    that did not parse evaluate it: the paths are one literal array and the search is one
    higher-order function, so the code a clean row runs does not grow with the contract."""
    checked = _checked_fields(schema, "$")
    text = parsed[CORRUPT_COL]
    if not checked:
        return F.when(text.isNotNull(), F.lit(f"$: {NOT_JSON}"))
    leaves = F.array(*[F.struct(F.lit(p).alias("p"), F.lit(k).alias("k")) for p, k in checked])
    message = F.try_parse_json(text)
    read = F.try_parse_json(F.to_json(parsed))  # what the parse kept: nulls left out

    def sent(leaf: Column) -> Column:
        return F.try_variant_get(message, leaf["p"], "variant")

    def lost(leaf: Column) -> Column:
        value = sent(leaf)
        unread = F.try_variant_get(read, leaf["p"], "variant").isNull()
        return value.isNotNull() & ~F.is_variant_null(value) & unread

    def describe(leaf: Column) -> Column:
        value = F.to_json(sent(leaf))
        shown = F.when(F.length(value) > 40, F.concat(F.left(value, F.lit(37)), F.lit("...")))
        return F.concat(leaf["p"], F.lit(": "), F.coalesce(shown, value), F.lit(" is "), leaf["k"])

    wrong = F.filter(leaves, lost)
    return (
        F.when(text.isNull(), F.lit(None).cast(S))
        .when(message.isNull(), F.lit("$: is not valid JSON (malformed)"))
        .when(F.size(wrong) > 0, F.array_join(F.transform(wrong, describe), "; "))
        .otherwise(F.lit(f"$: {NOT_JSON}"))
    )


_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _checked_fields(schema: StructType, path: str) -> list[tuple[str, str]]:
    """(JSON path, what its value must be) for every field whose wire type can refuse a JSON
    value, outermost first: strings and variants take any value; arrays and maps are checked
    as a whole."""
    out: list[tuple[str, str]] = []
    for f in schema.fields:
        if f.name == CORRUPT_COL or "'" in f.name:
            continue
        sub = f"{path}.{f.name}" if _IDENTIFIER.fullmatch(f.name) else f"{path}['{f.name}']"
        kind = _json_kind(f.dataType)
        if kind is not None:
            out.append((sub, kind))
        if isinstance(f.dataType, StructType):
            out += _checked_fields(f.dataType, sub)
    return out


def _json_kind(t: DataType) -> str | None:
    """What JSON value a wire type reads (None: any value)."""
    if isinstance(t, StringType | VariantType):
        return None
    if isinstance(t, StructType | MapType):
        return "not an object"
    if isinstance(t, ArrayType):
        return "not an array"
    if isinstance(t, BooleanType):
        return "not a boolean"
    if isinstance(t, IntegralType):
        return "not an integer"
    if isinstance(t, FractionalType):
        return "not a number"
    return f"not read as {t.simpleString()}"


PAYLOAD_KEY: Final = '"payload":'
PAYLOAD_TAIL_COL: Final = "__cdc_payload_tail"
_SPAN: Final = "__cdc_span"
_END: Final = "__cdc_end"
_WRAP_OPEN: Final = '{"' + _SPAN + '":{"payload":'
_WRAP_CLOSE: Final = ',"' + _END + '":1}'


def payload_tail(text: Column) -> Column:
    """The text after the message's last ``"payload":`` (the whole text when it has none)."""
    return F.substring_index(text, PAYLOAD_KEY, -1)


def payload_only(text: Column, tail: Column, inner: StructType, whole: Column) -> Column:
    """``whole`` (the parse of the entire message ``text``), computed from ``tail`` (the text
    after the message's last ``"payload":``, see :func:`payload_tail`) when that key is the
    top-level one.

    Producers put the (large) embedded schema before the payload, so the tail is the payload
    value and the envelope's closing brace. It is parsed inside a wrapper,
    ``{"<span>":{"payload":<tail>,"<end>":1}``: the end marker is read only when the tail closes
    exactly one object, i.e. when the key was a key of the top-level object. A key nested
    deeper (a column named ``payload``, a schema that nests one) closes the wrapper early, the
    marker is not read and the whole message is parsed; so is a message without the key, or one
    whose tail is malformed. The one difference from parsing the whole message: the text before
    the payload key (the schema) is not checked for JSON syntax."""
    quick = quick_parse(tail, inner)
    return F.when(from_tail(text, tail, quick), quick[_SPAN]).otherwise(whole)


def quick_parse(tail: Column, inner: StructType) -> Column:
    """The parse of ``tail`` inside the wrapper (see :func:`payload_only`)."""
    wrapped = F.concat(F.lit(_WRAP_OPEN), tail, F.lit(_WRAP_CLOSE))
    schema = StructType(
        [StructField(_SPAN, inner), StructField(_END, LongType()), StructField(CORRUPT_COL, S)]
    )
    return F.from_json(wrapped, schema, PARSE_OPTIONS)


def from_tail(text: Column, tail: Column, quick: Column) -> Column:
    """Whether the tail's parse gives the top-level payload (see :func:`payload_only`)."""
    top_level = (
        (F.octet_length(tail) < F.octet_length(text))
        & quick[CORRUPT_COL].isNull()
        & (quick[_END] == F.lit(1))
        & quick[_SPAN]["payload"].isNotNull()
        & quick[_SPAN][CORRUPT_COL].isNull()
    )
    return F.coalesce(top_level, F.lit(False))


def envelope_column(name: str) -> str:
    """The working column an envelope field is resolved into (see ``ConnectEnvelope.explode``)."""
    return f"__cdc_env_{name}"
