"""``debezium-mongodb-json``: documents held as MongoDB Extended JSON text, which no table can say.

``after``/``before`` (and an update's ``updateDescription`` or 1.x ``patch``) are strings
holding a document. Each is parsed into a variant and read as ``{field: variant}``; every
contract column is then decoded from its variant with the core's grammar
(:mod:`contracts.formats.ejson`): a JSON integer or ``$numberInt``/``$numberLong`` for an
integer column, a JSON fraction or ``$numberDouble`` for a double, ``$numberDecimal`` exactly at
the column's scale, ``$date`` (canonical, ISO-8601 or milliseconds) for a Timestamp, ``$binary``
(v2 or legacy), ``$timestamp``, ``$oid`` or a string for a string, documents and arrays
recursively. A value of another kind, a field the contract does not name or a document that
does not parse is an ``_error``; a column the document leaves out is in ``_absent``.

An update without its full document is its changed fields: ``updatedFields`` with
``removedFields`` as nulls (2.x) or ``$set``/``$unset`` of ``patch`` (1.x). A dotted field name
(a change inside a nested document) is refused here (the Python core reads it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DecimalType,
    MapType,
    StringType,
    StructField,
    StructType,
    VariantType,
)

from contracts.formats._typing import TEXT_WHITESPACE
from contracts.formats.debezium_mongodb_json import KEY_COLUMN, kind_of
from contracts.formats.ejson import BINARY_PARTS, INT32, KEY_OF, TIMESTAMP_PARTS
from contracts.formats.spec import Path
from contracts.logical import decimal_scale
from contracts.schema import ConnectSchema
from spark_bindings.build import Side, SpecDecoder
from spark_bindings.context import Context
from spark_bindings.expressions import (
    MAX_MICROS,
    MIN_MICROS,
    Decoded,
    Problem,
    as_is,
    padded_base64,
    text_timestamp,
)
from spark_bindings.feed import ABSENT_TYPE
from spark_bindings.parse import PARSE_OPTIONS

S = StringType()
#: A document as its fields' variants.
DOC: Final = MapType(S, VariantType())
ELEMENTS: Final = ArrayType(VariantType())
#: What ``schema_of_variant`` calls a JSON integer (any size up to a long).
INTEGER_KINDS: Final = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_LONG: Final = (-(2**63), 2**63 - 1)
_INT_TEXT: Final = r"^-?[0-9]+$"
_DOUBLE_TEXT: Final = r"^\s*[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|Infinity|NaN)\s*$"
_DECIMAL_TEXT: Final = r"^[+-]?([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$"
_UPDATE_FIELDS: Final = ("updatedFields", "removedFields")
#: Makes a part of a value a column of its own (``Context.stage``), or keeps it (``as_is``).
Stage = Callable[[Column], Column]


def document(text: Column) -> Column:
    """A document's text as ``{field: variant}`` (null: not JSON, or not an object)."""
    return F.try_variant_get(F.try_parse_json(text), "$", DOC.simpleString())


def _empty_doc() -> Column:
    """An empty document (an empty map literal does not cast to variant values)."""
    return document(F.lit("{}"))


def _wrapper(key: str, inner: str) -> str:
    """The pattern of ``{key: inner}`` as ``to_json`` writes a variant (compact, keys in
    order; group 1: the inner text)."""
    return r'^\{"' + re.escape(key) + '":' + inner + r"\}$"


#: A JSON string's text (escapes as written) as a group, and a JSON integer.
_STRING: Final = r'"((?:[^"\\]|\\.)*)"'
_INT: Final = r"(-?[0-9]+)"


def _inner(t: Column, key: str, inner: str = _STRING) -> Column:
    """Group 1 of ``{key: inner}`` in a value's JSON text ``t`` (null when it is not that)."""
    pattern = _wrapper(key, inner)
    return F.when(t.rlike(pattern), F.regexp_extract(t, pattern, 1))


def _int_text(text: Column, low: int, high: int, stage: Stage = as_is) -> Column:
    """Digits with an optional minus, in [low, high] (the core's ``_int``)."""
    number = stage(F.when(text.rlike(_INT_TEXT), text.try_cast("decimal(38,0)")))
    return F.when(number.between(low, high), number.cast("long"))


def _integer(v: Column, kind: Column, low: int, high: int) -> Column:
    """A JSON integer in [low, high]."""
    number = F.when(kind.isin(*INTEGER_KINDS), F.variant_get(v, "$", "long"))
    return F.when(number.between(low, high), number)


def _decimal(text: Column, schema: ConnectSchema, target: DecimalType) -> Column:
    """``$numberDecimal`` text with no more decimals than the column's scale (trailing zeros
    do not count, as the core's ``quantize`` check), in the column's precision."""
    matched = text.rlike(_DECIMAL_TEXT)
    whole = F.regexp_extract(text, _DECIMAL_TEXT, 1)
    fraction = F.regexp_extract(text, _DECIMAL_TEXT, 2)
    exponent = F.coalesce(F.regexp_extract(text, _DECIMAL_TEXT, 3).try_cast("int"), F.lit(0))
    digits = F.concat(whole, fraction)
    zeros = F.length(digits) - F.length(F.rtrim(digits, F.lit("0")))
    decimals = F.length(fraction) - exponent - zeros
    has_digits = F.length(digits) > 0
    exact = matched & has_digits & (decimals <= F.lit(decimal_scale(schema)))
    return F.when(exact, text.try_cast(target))


def _date(t: Column, stage: Stage) -> Column:
    """``$date``: ``{$numberLong}`` or JSON milliseconds, or ISO-8601 text (UTC without a
    zone); the core keeps milliseconds."""
    inner = stage(_inner(t, KEY_OF["date"], "(.*)"))
    canonical = _int_text(_inner(inner, KEY_OF["int64"]), *_LONG, stage)
    relaxed = _int_text(F.when(inner.rlike(_INT_TEXT), inner), *_LONG, stage)
    iso_text = F.regexp_extract(inner, "^" + _STRING + "$", 1)
    iso = text_timestamp(stage(F.trim(iso_text, F.lit(TEXT_WHITESPACE))), "UTC")
    millis = stage(F.coalesce(canonical, relaxed, F.unix_millis(iso)))
    in_range = millis.between(-(-MIN_MICROS // 1000), MAX_MICROS // 1000)
    return F.when(in_range, F.timestamp_millis(millis))


def _binary(t: Column, stage: Stage) -> Column:
    """``$binary``: v2 ``{base64, subType}`` or the legacy text beside ``$type``."""
    base64, subtype = BINARY_PARTS
    v2 = "\\{" + f'"{base64}":{_STRING},"{subtype}":"[^"]*"' + "\\}"
    legacy = _STRING + '(?:,"' + re.escape("$type") + '":"[^"]*")?'
    text = F.coalesce(_inner(t, KEY_OF["binary"], v2), _inner(t, KEY_OF["binary"], legacy))
    return padded_base64(stage(text))


def _bson_timestamp(t: Column, stage: Stage) -> Column:
    """``$timestamp``: ``{t, i}``, each an unsigned 32-bit integer."""
    ordered = sorted(TIMESTAMP_PARTS)  # as to_json writes a variant's keys
    pattern = _wrapper(
        KEY_OF["timestamp"], "\\{" + ",".join(f'"{p}":{_INT}' for p in ordered) + "\\}"
    )
    parts = {
        p: stage(
            _int_text(
                F.when(t.rlike(pattern), F.regexp_extract(t, pattern, i)), 0, 2**32 - 1, stage
            )
        )
        for i, p in enumerate(ordered, start=1)
    }
    fits = F.lit(True)
    for part in parts.values():
        fits = fits & part.isNotNull()
    return F.when(fits, F.struct(*[parts[p].alias(p) for p in TIMESTAMP_PARTS]))


def value(
    v: Column, schema: ConnectSchema, target: DataType, path: str, stage: Stage = as_is
) -> Decoded:
    """One extended-JSON value (a variant; SQL null: absent, a variant null: JSON null) as
    ``schema`` says, with the problems of a present value that does not decode. Wrappers are
    matched on the value's compact JSON text (``to_json``), each check reading that one text.

    ``stage`` makes a part read several times a column of its own (``Context.stage``: the
    value, its JSON text, its kind...), so that each is written and computed once; inside a
    lambda (an array's elements) nothing can be staged."""
    want = kind_of(schema)
    v = stage(v)
    null = F.is_variant_null(v)
    if want == "document":
        return _document_value(v, schema, target, path, stage)
    if want == "array":
        return _array_value(v, schema, target, path, stage)
    t = stage(F.to_json(v))
    kind = stage(F.schema_of_variant(v))
    if want == "string":
        oid = F.when(
            t.rlike(_wrapper(KEY_OF["objectId"], _STRING)),
            F.try_variant_get(v, f"$['{KEY_OF['objectId']}']", "string"),
        )
        decoded = F.when(F.startswith(t, F.lit('"')), F.variant_get(v, "$", "string")).otherwise(
            oid
        )
    elif want == "int32":
        decoded = F.coalesce(
            _integer(v, kind, *INT32), _int_text(_inner(t, KEY_OF["int32"]), *INT32, stage)
        ).cast("int")
    elif want == "int64":
        decoded = F.coalesce(
            _integer(v, kind, *_LONG),
            _int_text(_inner(t, KEY_OF["int32"]), *INT32, stage),
            _int_text(_inner(t, KEY_OF["int64"]), *_LONG, stage),
        )
    elif want == "double":
        fraction = kind.startswith("DECIMAL") | kind.isin("DOUBLE", "FLOAT")
        text = stage(_inner(t, KEY_OF["double"]))
        decoded = F.coalesce(
            F.when(fraction, F.variant_get(v, "$", "double")),
            F.when(text.rlike(_DOUBLE_TEXT), text.try_cast("double")),
        ).cast(target)
    elif want == "boolean":
        decoded = F.when(t.isin("true", "false"), t == F.lit("true"))
    elif want == "decimal":
        assert isinstance(target, DecimalType)
        decoded = _decimal(stage(_inner(t, KEY_OF["decimal"])), schema, target)
    elif want == "date":
        decoded = _date(t, stage)
    elif want == "binary":
        decoded = _binary(t, stage)
    elif want == "timestamp":
        decoded = _bson_timestamp(t, stage)
    else:
        decoded = F.lit(None).cast(target)
    there = v.isNotNull() & ~null

    def bad(value_is_null: Column) -> Column:
        return there & value_is_null

    said = f"is not {_NAMES.get(want, want)} in extended JSON"
    problems = [Problem(path, said, bad(decoded.isNull()), rebuild=bad)]
    return Decoded(F.when(~null, decoded), tuple(problems))


_NAMES: Final = {
    "string": "a string or $oid",
    "int32": "an int32 (a JSON integer or $numberInt)",
    "int64": "an int64 (a JSON integer, $numberInt or $numberLong)",
    "double": "a double (a JSON fraction or $numberDouble)",
    "boolean": "a boolean",
    "decimal": "a $numberDecimal with at most the column's scale, in its precision",
    "date": "a $date in the years 1-9999",
    "binary": "a $binary of valid base64",
    "timestamp": "a $timestamp {t, i}",
    "null": "a value of a type this format writes",
}


def _document_value(
    v: Column, schema: ConnectSchema, target: DataType, path: str, stage: Stage
) -> Decoded:
    """A nested document as a struct: every field it holds named by the contract, a required
    field there and not null; fields it leaves out are null."""
    assert isinstance(target, StructType)
    obj = stage(F.try_variant_get(v, "$", DOC.simpleString()))
    null = F.is_variant_null(v)
    there = v.isNotNull() & ~null
    names = [f.field or "" for f in schema.fields or ()]
    fields, problems = _fields(obj, schema, target, path, stage)
    extra = F.exists(F.map_keys(obj), lambda k: ~k.isin(*names)) if names else F.size(obj) > 0
    problems = [
        Problem(path, "is not a document", there & obj.isNull()),
        Problem(
            path,
            "holds a field that is not in the contract",
            there & F.coalesce(extra, F.lit(False)),
        ),
        *[p.narrowed(there & obj.isNotNull()) for p in problems],
    ]
    struct = F.struct(*[c.alias(n) for n, c in fields.items()])
    return Decoded(F.when(there & obj.isNotNull(), struct), tuple(problems))


def _fields(
    obj: Column, schema: ConnectSchema, target: StructType, path: str, stage: Stage
) -> tuple[dict[str, Column], list[Problem]]:
    """Every field of a struct from a document's ``{field: variant}``; a required field absent
    or null is a problem."""
    out: dict[str, Column] = {}
    problems: list[Problem] = []
    for f, spark_field in zip(schema.fields or (), target.fields, strict=True):
        name = f.field or spark_field.name
        v = stage(F.try_element_at(obj, F.lit(name)))
        decoded = value(v, f, spark_field.dataType, f"{path}.{name}", stage)
        out[name] = decoded.value
        problems += decoded.problems
        if not f.optional:
            problems.append(
                Problem(
                    f"{path}.{name}",
                    "is a required field, missing or null",
                    v.isNull() | F.is_variant_null(v),
                )
            )
    return out, problems


def _array_value(
    v: Column, schema: ConnectSchema, target: DataType, path: str, stage: Stage
) -> Decoded:
    assert isinstance(target, ArrayType) and schema.items is not None
    items, element_type = schema.items, target.elementType
    arr = stage(F.try_variant_get(v, "$", ELEMENTS.simpleString()))
    there = v.isNotNull() & ~F.is_variant_null(v)

    def element(x: Column) -> Decoded:
        decoded = value(x, items, element_type, f"{path}[]")
        if items.optional:
            return decoded
        missing = Problem(
            f"{path}[]", "is null in an array of required values", F.is_variant_null(x)
        )
        return Decoded(decoded.value, (*decoded.problems, missing))

    def bad(x: Column) -> Column:
        out = F.lit(False)
        for p in element(x).problems:
            out = out | F.coalesce(p.holds(), F.lit(False))
        return out

    problems = (
        Problem(path, "is not an array", there & arr.isNull()),
        Problem(
            f"{path}[]",
            "holds a value that does not decode",
            there & F.coalesce(F.exists(arr, bad), F.lit(False)),
        ),
    )
    return Decoded(F.when(there, F.transform(arr, lambda x: element(x).value)), problems)


def _decoded_unless_probe(
    v: Column, schema: ConnectSchema, target: DataType, path: str, ctx: Context
) -> Decoded:
    """``value`` with its parts staged, and the value staged. A feed built over the parse
    only collects the texts (``Context.over_parse``): values stage none, so none is built
    there (fewer Py4J calls per build); a value that staged a text would fail the texts'
    order check in ``decode_json_frame``."""
    if ctx.over_parse is not None:
        return Decoded(F.lit(None).cast(target))
    return ctx.stage_decoded(value(v, schema, target, path, ctx.stage))


def _with_nulls(fields: Column, removed: Column, null: Column) -> Column:
    """``fields`` with each ``removed`` name set to JSON null (a removed name wins)."""
    removed = F.array_distinct(F.filter(removed, lambda k: k.isNotNull()))
    kept = F.map_filter(fields, lambda k, _v: ~F.array_contains(removed, k))
    nulls = F.map_from_arrays(removed, F.transform(removed, lambda _k: null))
    return F.map_concat(kept, nulls)


class Decoder(SpecDecoder):
    """Debezium MongoDB change events: extended-JSON documents decoded to the contract."""

    def image_type(self, ctx: Context) -> DataType:
        return S

    def leaves(self, ctx: Context) -> list[tuple[Path, DataType]]:
        """The generic leaves, and an update's changed fields (2.x and 1.x)."""
        described = StructType(
            [StructField(_UPDATE_FIELDS[0], S), StructField(_UPDATE_FIELDS[1], ArrayType(S))]
        )
        return [*super().leaves(ctx), (("updateDescription",), described), (("patch",), S)]

    def image(self, j: Column, path: Path, ctx: Context) -> Side:
        text = self.read(j, path, ctx)
        where = self.json_path(path, ctx)
        doc = ctx.stage_text(document(text))
        problems = [
            Problem(where, "is not an extended JSON document", text.isNotNull() & doc.isNull())
        ]
        there = text.isNotNull()
        if path == self.spec.images.after:
            update, update_problems = self.update_fields(j, ctx)
            is_update = self.read(j, self.spec.ops.at, ctx) == F.lit(self.update_code())
            partial = text.isNull() & is_update & update.isNotNull()
            doc = ctx.stage(F.when(partial, update).otherwise(doc))
            problems += [p.gated(partial) for p in update_problems]
            there = there | partial
        return self.fields_side(doc, there, where, problems, ctx)

    def update_code(self) -> str:
        return next(code for code, op in self.spec.ops.codes.items() if op == "u")

    def update_fields(self, j: Column, ctx: Context) -> tuple[Column, list[Problem]]:
        """An update's changed fields as ``{field: variant}`` (removed ones JSON null), from
        ``updateDescription`` (2.x) or else ``patch`` (1.x); null when neither is there."""
        null = F.parse_json(F.lit("null"))
        described = self.read(j, ("updateDescription",), ctx)
        updated_text = described[_UPDATE_FIELDS[0]]
        updated = F.coalesce(document(updated_text), _empty_doc())
        removed = F.coalesce(described[_UPDATE_FIELDS[1]], F.array().cast(ArrayType(S)))
        from_described = _with_nulls(updated, removed, null)
        at = self.json_path(("updateDescription",), ctx)
        problems = [
            Problem(
                f"{at}.{_UPDATE_FIELDS[0]}",
                "is not an extended JSON document",
                described.isNotNull() & updated_text.isNotNull() & document(updated_text).isNull(),
            )
        ]
        patch_text = self.read(j, ("patch",), ctx)
        patch = document(patch_text)
        operators = F.exists(F.map_keys(patch), lambda k: F.startswith(k, F.lit("$")))
        set_ = F.coalesce(
            F.try_variant_get(F.try_element_at(patch, F.lit("$set")), "$", DOC.simpleString()),
            _empty_doc(),
        )
        unset = F.map_keys(
            F.coalesce(
                F.try_variant_get(
                    F.try_element_at(patch, F.lit("$unset")), "$", DOC.simpleString()
                ),
                _empty_doc(),
            )
        )
        from_patch = F.when(operators, _with_nulls(set_, unset, null)).otherwise(patch)
        patch_at = self.json_path(("patch",), ctx)
        unknown = F.exists(
            F.map_keys(patch),
            lambda k: F.startswith(k, F.lit("$")) & ~k.isin("$v", "$set", "$unset"),
        )
        not_docs = F.lit(False)
        for op in ("$set", "$unset"):
            inner = F.try_element_at(patch, F.lit(op))
            not_docs = not_docs | (
                inner.isNotNull() & F.try_variant_get(inner, "$", DOC.simpleString()).isNull()
            )
        use_patch = described.isNull() & patch_text.isNotNull()
        problems += [
            Problem(patch_at, "is not an extended JSON document", use_patch & patch.isNull()),
            Problem(
                patch_at,
                "holds an update other than $set/$unset of documents",
                use_patch & F.coalesce(operators & (unknown | not_docs), F.lit(False)),
            ),
        ]
        changed = ctx.stage_text(
            F.when(described.isNotNull(), from_described).when(use_patch, from_patch)
        )
        dotted = F.exists(F.map_keys(changed), lambda k: F.contains(k, F.lit(".")))
        problems.append(
            Problem(
                at,
                "changes a field inside a nested document (a dotted name): the Spark decoder "
                "reads top-level fields only (cdc-contracts normalize reads it)",
                F.coalesce(dotted, F.lit(False)),
            )
        )
        return changed, problems

    def fields_side(
        self, doc: Column, there: Column, where: str, problems: list[Problem], ctx: Context
    ) -> Side:
        """The contract's columns of a document (``{field: variant}``): present where the
        document holds the field; a field the contract does not name is a problem."""
        names = ctx.row.field_names()
        values: dict[str, Column] = {}
        present: dict[str, Column] = {}
        for f, spark_field in zip(ctx.row.fields or (), ctx.row_type.fields, strict=True):
            name = f.field or spark_field.name
            v = F.try_element_at(doc, F.lit(name))
            decoded = _decoded_unless_probe(v, f, spark_field.dataType, f"{where}.{name}", ctx)
            values[name] = decoded.value
            present[name] = F.coalesce(F.map_contains_key(doc, F.lit(name)), F.lit(False))
            problems += [p.narrowed(doc.isNotNull()) for p in decoded.problems]
        extra = F.exists(F.map_keys(doc), lambda k: ~k.isin(*names))
        problems.append(
            Problem(
                where, "holds a field that is not in the contract", F.coalesce(extra, F.lit(False))
            )
        )
        held = F.coalesce(F.map_keys(doc), F.array().cast(ABSENT_TYPE))
        return Side(values, present, there, problems, where, held)

    def key(
        self,
        j: Column,
        key_text: Column | None,
        before: Column,
        after: Column,
        ctx: Context,
        unique: Decoded | None = None,
    ) -> tuple[Column, list[Problem]]:
        """The contract's key columns from the first source holding them all: the Kafka key
        ``{"id": "<extended JSON of _id>"}`` (bare or Connect-wrapped; a key of ``_id``
        only), the after image, the before image. A Kafka key that is not such a document, or
        whose ``_id`` does not decode, is a problem (as in the core)."""
        problems: list[Problem] = []
        kafka: Column | None = None
        if key_text is not None:
            schema = StructType(
                [StructField("payload", StructType([StructField("id", S)])), StructField("id", S)]
            )
            k = F.from_json(key_text, schema, PARSE_OPTIONS)
            id_text = F.coalesce(k["payload"]["id"], k["id"])
            problems.append(
                Problem(
                    "$key",
                    "expected a key document {id: <extended JSON>}",
                    key_text.isNotNull() & id_text.isNull(),
                )
            )
            # from_json reads any JSON token as text (true as "true"): the core wants a string
            kv = F.try_parse_json(key_text)
            raw_id = F.coalesce(
                F.try_variant_get(kv, "$.payload.id", "variant"),
                F.try_variant_get(kv, "$.id", "variant"),
            )
            problems.append(
                Problem(
                    "$key.id",
                    "expected extended JSON text (a string)",
                    id_text.isNotNull() & (F.schema_of_variant(raw_id) != F.lit("STRING")),
                )
            )
            column = ctx.row.get_field(KEY_COLUMN)
            if column is not None:
                # an id that is not JSON is a bare string id, as older connectors wrote it
                bare = F.try_variant_get(
                    F.parse_json(F.to_json(F.array(id_text))), "$[0]", "variant"
                )
                v = F.coalesce(F.try_parse_json(id_text), bare)
                target = ctx.row_type[KEY_COLUMN].dataType
                decoded = _decoded_unless_probe(v, column, target, "$key.id", ctx)
                problems += [p.gated(id_text.isNotNull()) for p in decoded.problems]
                kafka = decoded.value
        if not ctx.contract.key:
            return F.lit(None).cast(ctx.key_type), problems
        found: list[Column] = []
        if kafka is not None and list(ctx.contract.key) == [KEY_COLUMN]:
            found.append(F.when(kafka.isNotNull(), F.struct(kafka.alias(KEY_COLUMN))))
        found += [ctx.key_from_image(after), ctx.key_from_image(before)]
        return F.coalesce(*found), problems
