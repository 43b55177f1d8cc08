"""The Spark decoder of a format, built from its core definition.

A format's facts live in ``contracts/formats/<name>.py`` as a
:class:`~contracts.formats.spec.FormatSpec` (op codes, controls, images and how their values are
written, table, times, position, key). :class:`SpecDecoder` reads those tables and generates the
Spark expressions — the wire schema ``from_json`` parses into, the op and control columns, the
decoded images, the key — the way sqlglot's generator reads a dialect's tables. Nothing here
names a format: a format whose messages need an expression the tables cannot say subclasses
:class:`SpecDecoder` in ``spark_bindings/formats/<module>.py`` (named in its registry entry,
``contracts.formats.FORMATS``), overriding only that.

:func:`decoder_for` gives the decoder of a registered format (text formats; Avro-record formats
are read by the core format itself, see :mod:`spark_bindings.avro`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    VariantType,
)

from contracts.errors import UnknownFormatError
from contracts.formats import FORMATS, get_format
from contracts.formats._connect import describe_key, key_signature
from contracts.formats._typing import cell_refused_kinds
from contracts.formats.spec import (
    TIME_OUT_OF_RANGE,
    Absent,
    AllOf,
    AnyOf,
    Equals,
    FirstOf,
    FormatSpec,
    Image,
    ImageRule,
    Only,
    Overlay,
    Path,
    Position,
    Present,
    Time,
    condition_paths,
    connector_keys,
    rule_paths,
)
from contracts.schema import ConnectSchema
from spark_bindings.context import Context
from spark_bindings.expressions import (
    Decoded,
    Problem,
    could_be_kind,
    could_be_no_string,
    floor_div,
    json_absent,
    padded_base64,
    stripped,
    text_timestamp,
)
from spark_bindings.feed import (
    ABSENT_TYPE,
    PARSED_COL,
    POSITION_TYPE,
    Feed,
    constant_table,
    first_control,
    op_from,
    position_map,
    table_struct,
)
from spark_bindings.frame import Frame
from spark_bindings.parse import (
    BAD_JSON_COL,
    CORRUPT_COL,
    NOT_JSON,
    NOT_JSON_KEY,
    PARSE_OPTIONS,
    PAYLOAD_TAIL_COL,
    Decoder,
    envelope_column,
    payload_only,
    payload_tail,
)
from spark_bindings.schema import quoted

S = StringType()
L = LongType()

#: The parse's field holding a plain-JSON image's text-only cells as variants (null: not read
#: again, see ``SpecDecoder.with_cell_kinds``).
CELL_KINDS: Final = "__cdc_cell_kinds"
#: The exploded row change of a message of several rows (its index and its elements).
ROW_COL: Final = "__cdc_row"
#: The parse projection's row arrays (read by the explode only).
ROWS_COL: Final = "__cdc_rows_"
#: The row changes of a message of several rows, before the explode.
ELEMENTS_COL: Final = "__cdc_elements"
#: Suffix of a row array's texts (each row's contract columns looked up in the parse).
ROW_TEXTS: Final = "__texts"

UNKNOWN_OP: Final = "is not a known op code"


@dataclass
class Side:
    """One image as decoded columns: value, whether each column is in the image, whether
    the image is there, and the problems of the texts it reads."""

    values: dict[str, Column]
    present: dict[str, Column]
    there: Column
    problems: list[Problem] = field(default_factory=list)
    #: The JSON path its values are reported under.
    where: str = "$"
    #: The names of the columns the image holds, as one array (``None`` for a Connect image,
    #: which leaves none out): its absent columns are one set difference, not a test per column.
    held: Column | None = None


class SpecDecoder(Decoder):
    """The decoder of one format, generated from its :class:`FormatSpec`."""

    def __init__(self, name: str, spec: FormatSpec) -> None:
        self.name = name
        self.spec = spec
        self.uses_key = spec.key.kafka
        # text images read straight from the parse: their texts can be staged over it
        # a Connect message's texts too: strings and Decimals read from variants, with their
        # kind checks, took debezium's fused decode stage past the JIT's 8,000 bytes
        self.texts_from_parse = (
            spec.images.values == "text" and spec.rows is None
        ) or spec.connect is not None
        self._envelopes: dict[int, tuple[Context, StructType]] = {}
        # plain JSON images (no raw bytes): each value's text (a string's content, another
        # value's JSON text) read with the text rules, as the core reads a JSON string
        self.plain_json = spec.images.values == "json" and spec.images.raw is None

    # --- the wire schema ----------------------------------------------------------------------

    def is_connect(self, ctx: Context) -> bool:
        """``{schema, payload}`` messages (``options.schemas_enable`` not false)."""
        return (
            self.spec.connect is not None
            and ctx.contract.option("schemas_enable", True) is not False
        )

    def map_blocks(self) -> set[Path]:
        """Blocks parsed as ``map<string,string>``: text values, and the keys matter."""
        return set(self.spec.text_blocks)

    def image_type(self, ctx: Context) -> DataType:
        """What ``from_json`` parses one row image into."""
        images = self.spec.images
        if images.values == "connect":
            return ctx.row_wire
        if images.values == "text" or self.plain_json:
            return MapType(S, S)  # the columns a message leaves out (or adds) stay visible
        return S

    def leaves(self, ctx: Context) -> list[tuple[Path, DataType]]:
        """Every envelope field the rules read, with its wire type."""
        spec = self.spec
        # images and key structs first: a control condition reading the same field only asks
        # whether it is there, which any type answers
        image = self.image_type(ctx)
        out: list[tuple[Path, DataType]] = [
            (path, ArrayType(image) if spec.rows is not None else image)
            for path in (spec.images.before, spec.images.after)
        ]
        if spec.key.unique:
            out.append((spec.key.unique, ctx.key_wire))
        out += [
            (t.at, S if t.text or t.unit == "iso" else L) for t in (*spec.ts_ms, *spec.source_ts_ms)
        ]
        out += [(p, VariantType()) for p in spec.table.paths().values()]
        out += self.position_leaves(ctx)
        out.append((spec.ops.at, S))
        if spec.key.record:
            out.append((spec.key.record, S))
        if spec.images.exists is not None:
            out.append((spec.images.exists.at, MapType(S, S)))
        out += [(p, S) for p in spec.base64]
        for rule in spec.controls:  # last: a field a rule only asks about keeps its own type
            out += _condition_leaves(rule.when)
        return out

    def position_leaves(self, ctx: Context) -> list[tuple[Path, DataType]]:
        rule = self.spec.position
        out: list[tuple[Path, DataType]] = [(p, S) for p in rule.named.values()]
        if not rule.at:
            return out
        if rule.by_connector is not None:
            keys = connector_keys(rule, {}, _contract_connector(ctx))
            return out + [((*rule.at, k), S) for k in (rule.connector, *keys)]
        if rule.pairs:
            return [
                *out,
                (rule.at, ArrayType(StructType([StructField("name", S), StructField("value", S)]))),
            ]
        if rule.at in self.map_blocks():
            return [*out, (rule.at, MapType(S, S))]
        return out + [((*rule.at, k), S) for k in rule.keys or ()]

    def envelope_type(self, ctx: Context) -> StructType:
        """The envelope's wire type: every leaf at its path, blocks nested (a map block holds
        its fields itself). Built once per decode (``ctx``)."""
        cached = self._envelopes.get(id(ctx))
        if cached is not None and cached[0] is ctx:
            return cached[1]
        if len(self._envelopes) > 64:
            self._envelopes.clear()
        built = self._envelope_type(ctx)
        self._envelopes[id(ctx)] = (ctx, built)
        return built

    def _envelope_type(self, ctx: Context) -> StructType:
        maps, texts = self.map_blocks(), set(self.spec.json_texts)
        tree: dict[str, object] = {}
        for path, type_ in self.leaves(ctx):
            block = next((b for b in (*maps, *texts) if path[: len(b)] == b), None)
            if block is not None:
                path, type_ = block, S if block in texts else MapType(S, S)
            _insert(tree, path, type_)
        return _struct_of(tree)

    def wire_schema(self, ctx: Context) -> StructType:
        env = self.envelope_type(ctx)
        connect = self.spec.connect
        if connect is None or not self.is_connect(ctx):
            return env
        out = StructType([StructField(connect.payload, env)])
        for name in connect.bare:
            out = out.add(name, S)
        return out

    # --- the parse ------------------------------------------------------------------------------

    def parse(self, text: Column, ctx: Context) -> Column:
        """A ``{schema, payload}`` message is parsed from its ``payload`` key on (see
        :func:`~spark_bindings.parse.payload_only`): the parser does not read the schema."""
        whole = super().parse(text, ctx)
        if not self.is_connect(ctx):
            return self.with_cell_kinds(whole, text, ctx)
        return payload_only(text, F.col(PAYLOAD_TAIL_COL), self.parse_schema(ctx), whole)

    def text_only_columns(self, ctx: Context) -> list[str]:
        """The columns of a plain-JSON or text image whose cells the core refuses unless they
        are strings (``cell_refused_kinds``): the map of texts reads ``5`` and ``"5"`` alike,
        and an object as its JSON text."""
        if self.spec.images.values not in ("json", "text"):
            return []
        images = self.spec.images
        return [f.field or "" for f in ctx.row.fields or () if cell_refused_kinds(f, images)]

    def cell_texts(self, j: Column, path: Path, ctx: Context) -> Column:
        """A plain-JSON image as the map of texts its cells are read from."""
        return self.read(j, path, ctx)

    def with_cell_kinds(self, whole: Column, text: Column, ctx: Context) -> Column:
        """The parse, with the text-only cells of its images read again as variants (to know
        their JSON kind) — only from a message where one of them could be something other
        than a string (a number, ``true``/``false``, an array or an object)."""
        names = self.text_only_columns(ctx)
        if not names:
            return whole
        paths = (self.spec.images.before, self.spec.images.after)
        refused = {n: cell_refused_kinds(ctx.column(n), self.spec.images) for n in names}

        def could_in(image: Column) -> Column:
            found = F.lit(False)
            for name in names:
                found = found | could_be_kind(F.try_element_at(image, F.lit(name)), refused[name])
            return found

        could = F.lit(False)
        tree: dict[str, object] = {}
        cells = StructType([StructField(n, VariantType()) for n in names])
        for path in paths:
            image = self.cell_texts(whole, path, ctx)
            if self.spec.rows is not None:  # an array of rows (Canal's data and old)
                could = could | F.exists(image, could_in)
                _insert(tree, path, ArrayType(cells))
            else:
                could = could | could_in(image)
                _insert(tree, path, cells)
        kinds = F.from_json(text, _struct_of(tree), PARSE_OPTIONS)
        return whole.withField(CELL_KINDS, F.when(F.coalesce(could, F.lit(False)), kinds))

    def prepare(self, df: Frame, text: Column, ctx: Context) -> Frame:
        if not self.is_connect(ctx):
            return df
        return df.select("*", payload_tail(text).alias(PAYLOAD_TAIL_COL))

    def parse_columns(self, parsed: Column, ctx: Context) -> dict[str, Column]:
        """A message of several rows: its row arrays as columns of their own, apart from the
        rest (no exploded row carries them: each would copy the whole arrays).

        Rows parsed as maps also give each row's contract columns as a struct of texts, looked
        up here, in the parse projection (compiled apart, in small methods): each lookup is a
        loop over the row's keys, and two dozen of them in the decode stage's fused method
        took it past the JIT's 8,000-byte limit.

        A Connect envelope gives its fields as columns here too (see
        :meth:`envelope_fields`)."""
        if self.spec.connect is not None:
            return self.envelope_fields(parsed, ctx)
        if self.spec.rows is None:
            return {PARSED_COL: parsed}
        before, after = self.spec.images.before[0], self.spec.images.after[0]
        names = ctx.row.field_names()

        def texts(row: Column) -> Column:
            return F.struct(*[F.try_element_at(row, F.lit(n)).alias(n) for n in names])

        out = {PARSED_COL: parsed.dropFields(after, before)}
        for side in (after, before):
            out[ROWS_COL + side] = parsed[side]
            if self.texts_by_row(ctx):
                out[ROWS_COL + side + ROW_TEXTS] = F.transform(parsed[side], texts)
        return out

    def texts_by_row(self, ctx: Context) -> bool:
        """Whether each row's texts are looked up in the parse (see :meth:`parse_columns`)."""
        return self.spec.rows is not None and isinstance(self.image_type(ctx), MapType)

    def explode(self, df: Frame, parsed: Column, ctx: Context) -> Frame:
        if self.spec.rows is not None:
            return self.explode_rows(df, ctx)
        return df

    def envelope_fields(self, parsed: Column, ctx: Context) -> dict[str, Column]:
        """Envelope fields as columns, and whether the parse failed; no column holds the
        parsed struct (fewer nested fields keep the plan under Spark's whole-stage-codegen
        field limit). Columns of the parse projection, which is compiled apart: the decode
        stage's fused method, which must stay under the JIT's 8,000-byte limit, starts at
        them. A document that is only one of the ``bare`` fields is its own envelope."""
        out = {BAD_JSON_COL: parsed.isNull() | parsed[CORRUPT_COL].isNotNull()}
        for name in self.envelope_type(ctx).fieldNames():
            out[envelope_column(name)] = self.envelope_field(parsed, name, ctx)
        return out

    def envelope_field(self, parsed: Column, name: str, ctx: Context) -> Column:
        """One envelope field of the parsed message (see :meth:`envelope_fields`)."""
        connect = self.spec.connect
        assert connect is not None
        if not self.is_connect(ctx):
            return parsed[name]
        value = parsed[connect.payload][name]
        if name in connect.bare:
            value = F.coalesce(value, F.when(parsed[connect.payload].isNull(), parsed[name]))
        return value

    def envelope_columns(self, df: Frame, parsed: Column, ctx: Context) -> Frame:
        """The envelope fields (:meth:`envelope_fields`) of the parsed column ``parsed``."""
        keep = [F.col(quoted(c)) for c in df.columns if c != PARSED_COL]
        fields = self.envelope_fields(parsed, ctx)
        return df.select(*keep, *[v.alias(k) for k, v in fields.items()])

    def explode_rows(self, df: Frame, ctx: Context) -> Frame:
        """One row per row change: the index and the elements of both arrays (read once here,
        not once per column by every later expression)."""
        before, after = self.spec.images.before[0], self.spec.images.after[0]
        data, old = F.col(ROWS_COL + after), F.col(ROWS_COL + before)
        rows = F.when(F.size(data) > 0, F.sequence(F.lit(0), F.size(data) - 1)).when(
            F.size(old) > 0, F.sequence(F.lit(0), F.size(old) - 1)
        )
        # one row, whatever the arrays hold, for a change of the whole table (TRUNCATE), a
        # control code (TiDB's watermark) and a control rule over the op (Canal's DDL)
        whole = [
            c for c, o in self.spec.ops.codes.items() if self.spec.images.rules(o) == (None, None)
        ]
        whole += list(self.spec.ops.controls)
        one = F.col(PARSED_COL)[self.spec.ops.at[0]].isin(*whole) if whole else F.lit(False)
        for rule in self.spec.controls:
            if rule.over_op:
                one = one | self.condition(rule.when, F.col(PARSED_COL), ctx)
        rows = F.when(~F.coalesce(one, F.lit(False)), rows)
        texts = (
            [(F.col(ROWS_COL + side + ROW_TEXTS), side + ROW_TEXTS) for side in (after, before)]
            if self.texts_by_row(ctx)
            else []
        )
        element = F.transform(
            rows,
            lambda i: F.struct(
                i.alias("index"),
                F.try_element_at(data, i + 1).alias(after),
                F.try_element_at(old, i + 1).alias(before),
                F.size(data).alias(f"{after}_rows"),
                F.size(old).alias(f"{before}_rows"),
                *[F.try_element_at(array, i + 1).alias(name) for array, name in texts],
            ),
        )
        keep = [F.col(quoted(c)) for c in df.columns if not c.startswith(ROWS_COL)]
        # the elements in a projection of their own, before the explode: it reads the row
        # arrays of the (uncollapsible) parse, so it stays apart from the decode stage, whose
        # fused method must stay under the JIT's 8,000-byte limit
        elements = df.select(*[F.col(quoted(c)) for c in df.columns], element.alias(ELEMENTS_COL))
        return elements.select(*keep, F.explode_outer(F.col(ELEMENTS_COL)).alias(ROW_COL))

    def parse_problem(self, present: Column, j: Column) -> Problem:
        if self.spec.connect is not None:
            return Problem("$", NOT_JSON, present & F.col(BAD_JSON_COL))
        return super().parse_problem(present, j)

    # --- reading the envelope -------------------------------------------------------------------

    def json_path(self, path: Path, ctx: Context) -> str:
        """The JSON path of an envelope field in the message."""
        # a Connect envelope's fields are named under $.payload, with or without the schema half
        root = f"$.{self.spec.connect.payload}" if self.spec.connect is not None else "$"
        return root + "".join(f".{p}" for p in path)

    def read(self, j: Column, path: Path, ctx: Context) -> Column:
        """The value at ``path`` (struct fields and map entries alike; never an ANSI error)."""
        if self.spec.connect is not None:
            value = (
                F.col(envelope_column(path[0]))
                if ctx.over_parse is None
                else self.envelope_field(ctx.over_parse, path[0], ctx)
            )
            type_ = self.envelope_type(ctx)[path[0]].dataType
        else:
            value, type_ = j[path[0]], self.envelope_type(ctx)[path[0]].dataType
        for i, step in enumerate(path[1:], start=1):
            if path[:i] in self.spec.json_texts:
                value, type_ = F.from_json(value, MapType(S, S)), MapType(S, S)
            if isinstance(type_, MapType):
                return F.try_element_at(value, F.lit(step))
            assert isinstance(type_, StructType), (path, type_)
            value, type_ = value[step], type_[step].dataType
        return value

    # --- the feed -------------------------------------------------------------------------------

    def feed(self, j: Column, key_text: Column | None, ctx: Context) -> Feed:
        spec = self.spec
        op, control = self.op_and_control(j, ctx)
        before, after, image_problems, absent = self.images(j, op, ctx)
        table, table_problems = self.table(j, ctx)
        unique = self.unique_key(j, ctx)
        key, key_problems = self.key(j, key_text, before, after, ctx, unique)
        change = control.isNull()
        # a Connect control record's row images and key struct are decoded too, and a value
        # that does not decode makes it bad (the core's ``check_control``)
        decoded = [*image_problems, *(unique.problems if unique is not None else [])]
        controls_too = spec.images.values == "connect"
        always, unchecked = (decoded, []) if controls_too else ([], decoded)
        problems = [
            *unchecked,
            Problem(self.json_path(spec.ops.at, ctx), UNKNOWN_OP, op.isNull() & change),
            *self.shape_problems(j, op, ctx),
            *[p.gated(op.isNotNull()) for p in table_problems],
            *key_problems,
        ]
        return Feed(
            op=op,
            table=table,
            key=key,
            before=before,
            after=after,
            ts_ms=self.time(spec.ts_ms, j, ctx),
            source_ts_ms=self.time(spec.source_ts_ms, j, ctx),
            position=self.position(j, ctx),
            control=control,
            problems=(
                *[p.gated(change) for p in problems],
                *always,
                *self.required_problems(j, ctx),
            ),
            key_problems=tuple(key_problems),
            element=F.col(ROW_COL)["index"] if spec.rows is not None else None,
            element_arrays=(spec.images.after[0], spec.images.before[0]),
            absent=absent,
        )

    def op_and_control(self, j: Column, ctx: Context) -> tuple[Column, Column]:
        """The canonical op (null: unknown or a control record) and the control kind, as
        staged columns.

        Every image gate, check and output column reads them: inlined, each read would repeat
        the code-to-op table and the control rules (the optimizer pushes ``op = 'u'`` into the
        table's branches, so no read shares another's work). The op a code names and the
        control kind are columns of the texts projection, the final op one of the staging
        projection, which reads both."""
        ops = self.spec.ops
        code = self.read(j, ops.at, ctx)
        if ops.spelling == "words":
            code = F.trim(F.regexp_replace(F.lower(code), r"[_\s]+", " "))
        over = [(r.kind, self.condition(r.when, j, ctx)) for r in self.spec.controls if r.over_op]
        after_op = [
            (r.kind, self.condition(r.when, j, ctx)) for r in self.spec.controls if not r.over_op
        ]
        kinds = [first_control(over)] if over else []
        if ops.controls:
            kinds.append(op_from(code, ops.controls))
        if after_op:
            no_op = ~F.coalesce(code.isin(*ops.codes), F.lit(False))  # op_from(...) is null
            kinds.append(F.when(no_op, first_control(after_op)))
        control = F.coalesce(*kinds) if len(kinds) > 1 else kinds[0] if kinds else F.lit(None)
        control = ctx.stage_text(control.cast("string"))
        op = ctx.stage_text(op_from(code, ops.codes))
        return ctx.stage(F.when(control.isNull(), op)), control

    def condition(self, condition: object, j: Column, ctx: Context) -> Column:
        """A control condition as a Column."""
        if isinstance(condition, Equals):
            return self.read(j, condition.at, ctx).isin(*condition.values)
        if isinstance(condition, Present):
            return self.read(j, condition.at, ctx).isNotNull()
        if isinstance(condition, Absent):
            return self.read(j, condition.at, ctx).isNull()
        if isinstance(condition, Only):
            out = F.lit(True)
            for name in self.spec.known_fields():
                value = self.read(j, (name,), ctx)
                out = out & (value.isNotNull() if name in condition.present else value.isNull())
            return out
        assert isinstance(condition, AllOf | AnyOf)
        parts = [self.condition(c, j, ctx) for c in condition.conditions]
        out = parts[0]
        for part in parts[1:]:
            out = (out & part) if isinstance(condition, AllOf) else (out | part)
        return out

    def required_problems(self, j: Column, ctx: Context) -> list[Problem]:
        """Fields every message must carry, a control record too (the core reads them first),
        and JSON integer times in seconds whose milliseconds leave a 64-bit integer."""
        out = [
            Problem(self.json_path(path, ctx), "is missing", self.read(j, path, ctx).isNull())
            for path in self.spec.required
        ]
        for rule in (*self.spec.ts_ms, *self.spec.source_ts_ms):
            if rule.unit == "s" and not rule.text:
                value = self.read(j, rule.at, ctx)
                over = value.isNotNull() & F.try_multiply(value, F.lit(1000)).isNull()
                out.append(Problem(self.json_path(rule.at, ctx), TIME_OUT_OF_RANGE, over))
        return out

    def shape_problems(self, j: Column, op: Column, ctx: Context) -> list[Problem]:
        """Base64 fields, exists flags and cursor texts."""
        spec = self.spec
        out: list[Problem] = []
        for path in spec.base64:
            text = self.read(j, path, ctx)
            bad = text.isNotNull() & padded_base64(text).isNull()
            out.append(Problem(self.json_path(path, ctx), "is not valid base64", bad))
        exists = spec.images.exists
        if exists is not None:
            flags = [F.lit(f) for f in exists.flags]
            block = self.read(j, exists.at, ctx)
            bad = F.coalesce(
                F.exists(F.map_values(block), lambda v: v.isNull() | ~v.isin(*flags)), F.lit(False)
            )
            said = f"holds a flag other than {', '.join(exists.flags)}"
            out.append(Problem(self.json_path(exists.at, ctx), said, bad))
        if spec.rows is not None:
            out += self.row_problems(op, ctx)
        for text_block in spec.json_texts:
            parsed = F.from_json(self.read(j, text_block, ctx), MapType(S, S))
            out.append(
                Problem(self.json_path(text_block, ctx), "is not a JSON object", parsed.isNull())
            )
        return out

    def row_problems(self, op: Column, ctx: Context) -> list[Problem]:
        """A message of several rows: an op with images needs a row; an update's before array
        holds one image per row (fewer would invent absent pre-images)."""
        images = self.spec.images
        row = F.col(ROW_COL)
        after, before = images.after[0], images.before[0]
        imaged = [o for o in images.by_op if images.rules(o) != (None, None)]
        out = [
            Problem(
                self.json_path(images.after, ctx),
                "holds no rows",
                op.isin(*imaged) & row["index"].isNull(),
            )
        ]
        for o, (before_rule, _after_rule) in images.by_op.items():
            if isinstance(before_rule, Overlay) and before_rule.needs_top:
                rows, tops = row[f"{after}_rows"], row[f"{before}_rows"]
                said = F.concat(
                    F.lit(f"{before} has "),
                    tops.cast("string"),
                    F.lit(f" rows but {after} has "),
                    rows.cast("string"),
                )
                uneven = (op == F.lit(o)) & (tops >= 0) & (tops != rows)
                out.append(Problem(self.json_path(images.before, ctx), said, uneven))
        return out

    # --- images ---------------------------------------------------------------------------------

    def images(
        self, j: Column, op: Column, ctx: Context
    ) -> tuple[Column, Column, list[Problem], Column]:
        """(before, after, problems, absent) as the spec's rules say, per op."""
        spec = self.spec
        paths = dict.fromkeys(
            p
            for o in (*spec.images.by_op, "")
            for rule in spec.images.rules(o)
            for p in rule_paths(rule)
        )
        decoded = {p: self.image(j, p, ctx) for p in paths}
        no_absence = spec.images.values == "connect"
        problems: list[Problem] = []
        sides: list[Column] = []
        absent: list[Column] = []
        used: dict[Path, list[Column]] = {p: [] for p in paths}
        names = ctx.row.field_names()
        for index, label in ((0, "before"), (1, "after")):
            cases: list[tuple[Column | None, Side]] = []
            if not spec.images.by_op:
                rule = spec.images.rules("")[index]
                assert rule is not None
                side = self.combine(rule, decoded, j, ctx, used, None)
                cases.append((None, side))
            for o, rules in spec.images.by_op.items():
                rule = rules[index]
                if rule is not None:
                    is_op = op == F.lit(o)
                    cases.append((is_op, self.combine(rule, decoded, j, ctx, used, is_op)))
            value: Column = F.lit(None).cast(ctx.row_type)
            for gate, side in reversed(cases):
                struct = F.when(side.there, F.struct(*[v.alias(n) for n, v in side.values.items()]))
                value = struct if gate is None else F.when(gate, struct).otherwise(value)
                on = _holds(gate, side)
                if not no_absence:  # a Connect image states its own required columns
                    problems += [p.gated(on) for p in self.required(side, ctx)]
            sides.append(value)
            if not no_absence:
                absent.append(self.absent_names(cases, names, label))
        for path, gates in used.items():
            if gates:
                anywhere = gates[0]
                for g in gates[1:]:
                    anywhere = anywhere | g
                problems += [p.gated(anywhere) for p in decoded[path].problems]
        absent_col = F.concat(*absent) if absent else F.array().cast(ABSENT_TYPE)
        return sides[0], sides[1], problems, absent_col

    @staticmethod
    def absent_names(
        cases: list[tuple[Column | None, Side]], names: list[str], label: str
    ) -> Column:
        """The columns an image leaves out, as ``label.name`` (an empty array where the image
        is not there): the contract's names less those the image holds (``Side.held``: one set
        difference per row, not a test per column)."""
        none = F.array().cast(ABSENT_TYPE)
        contract_names = F.array(*[F.lit(n) for n in names])
        missing: Column = F.lit(None).cast(ABSENT_TYPE)
        for gate, side in reversed(cases):
            if side.held is None:
                raise ValueError(f"{label}: an image that can leave columns out lists none held")
            gone = F.array_except(contract_names, side.held)
            missing = F.when(_holds(gate, side), gone).otherwise(missing)
        # the lambda only runs on a row that leaves a column out
        labelled = F.transform(missing, lambda n: F.concat(F.lit(f"{label}."), n))
        return F.when(F.size(missing) > 0, labelled).otherwise(none)

    def combine(
        self,
        rule: ImageRule,
        decoded: Mapping[Path, Side],
        j: Column,
        ctx: Context,
        used: dict[Path, list[Column]],
        gate: Column | None,
    ) -> Side:
        """The image a rule makes of the decoded images it reads (recording where each is
        used, so its problems count there)."""

        def use(path: Path, when: Column) -> None:
            used[path].append(when if gate is None else gate & when)

        if isinstance(rule, Image):
            side = decoded[rule.at]
            use(rule.at, side.there)
            there = side.there | F.lit(True) if rule.empty else side.there
            return replace(side, there=there, problems=[])
        if isinstance(rule, Overlay):
            base, top = decoded[rule.base], decoded[rule.top]
            there = top.there if rule.needs_top else F.lit(True)
            use(rule.base, there & base.there)
            use(rule.top, there & top.there)
            return Side(
                values={
                    n: F.when(top.present[n], top.values[n]).otherwise(base.values[n])
                    for n in base.values
                },
                present={n: top.present[n] | base.present[n] for n in base.values},
                there=there,
                where=top.where,
                held=_either(top.held, base.held, F.array_union),
            )
        assert isinstance(rule, FirstOf)
        chosen: Side | None = None
        for path in reversed(rule.images):
            side = decoded[path]
            holds = self.holds_rows(j, path, side, ctx)
            chosen = (
                side
                if chosen is None
                else Side(
                    values={
                        n: F.when(holds, v).otherwise(chosen.values[n])
                        for n, v in side.values.items()
                    },
                    present={
                        n: F.when(holds, v).otherwise(chosen.present[n])
                        for n, v in side.present.items()
                    },
                    there=holds | chosen.there,
                    where=side.where,
                    held=_either(side.held, chosen.held, _chosen_by(holds)),
                )
            )
        assert chosen is not None
        for i, path in enumerate(rule.images):
            earlier = F.lit(False)
            for prior in rule.images[:i]:
                earlier = earlier | self.holds_rows(j, prior, decoded[prior], ctx)
            use(path, ~earlier & self.holds_rows(j, path, decoded[path], ctx))
        there = chosen.there | F.lit(True) if rule.empty else chosen.there
        return replace(chosen, there=there)

    def holds_rows(self, j: Column, path: Path, side: Side, ctx: Context) -> Column:
        """Whether an image (of a message of several rows: its array) holds anything."""
        if self.spec.rows is not None:
            return F.coalesce(F.col(ROW_COL)[f"{path[0]}_rows"] > 0, F.lit(False))
        wire = self.image_wire(j, path, ctx)
        if isinstance(self.image_type(ctx), MapType):
            return F.coalesce(F.size(wire) > 0, F.lit(False))
        return side.there

    def image_wire(self, j: Column, path: Path, ctx: Context) -> Column:
        """An image as parsed (of a message of several rows: this row's element)."""
        if self.spec.rows is not None:
            return F.col(ROW_COL)[path[0]]
        return self.read(j, path, ctx)

    def image(self, j: Column, path: Path, ctx: Context) -> Side:
        """The image at ``path``, decoded."""
        images = self.spec.images
        wire = self.image_wire(j, path, ctx)
        where = self.json_path(path, ctx)
        if images.values == "connect":
            if images.empty_is_absent:
                empty = F.lit(True)
                for f in ctx.row.fields or ():
                    empty = empty & json_absent(wire[f.field or ""], f)
                wire = F.when(~empty, wire)
            decoded = ctx.json_image(wire, where)
            names = ctx.row.field_names()
            return Side(
                values={n: decoded.value[n] for n in names},
                present=dict.fromkeys(names, F.lit(True)),
                there=wire.isNotNull(),
                problems=list(decoded.problems),
                where=where,
            )
        if images.values != "text" and not self.plain_json:
            raise NotImplementedError(
                f"{self.name}: {images.values} images need a Spark module (spark_bindings/formats)"
            )
        return self.text_image(j, wire, path, where, ctx)

    def text_image(self, j: Column, wire: Column, path: Path, where: str, ctx: Context) -> Side:
        """A text image: each column's text decoded with the text rules; a column the message
        leaves out (or whose exists flag says so) is absent."""
        images = self.spec.images
        dialect = replace(images.text, time_zone=str(ctx.contract.option("time_zone", "UTC")))
        names = ctx.row.field_names()
        values: dict[str, Column] = {}
        present: dict[str, Column] = {}
        problems: list[Problem] = []
        exists = images.exists
        block = self.read(j, exists.at, ctx) if exists is not None else None
        side = 0 if path == images.before else 1
        held = [F.lit(f) for f, on in (exists.flags.items() if exists else ()) if on[side]]
        by_row = self.texts_by_row(ctx)
        text_only = set(self.text_only_columns(ctx))
        for name in names:
            if by_row:  # looked up in the parse projection
                raw = F.col(ROW_COL)[path[0] + ROW_TEXTS][name]
            else:
                raw = F.try_element_at(wire, F.lit(name))
            if block is not None:
                flag = F.try_element_at(block, F.lit(name))
                here = F.coalesce(flag.isin(*held), F.lit(False))
            else:
                here = F.coalesce(F.map_contains_key(wire, F.lit(name)), F.lit(False))
            text = raw if images.null_text is None else F.when(raw != F.lit(images.null_text), raw)
            if block is not None:
                text = F.when(here, text)
            decoded = ctx.text_value(name, text, f"{where}.{name}", dialect)
            values[name] = decoded.value
            present[name] = here
            problems.extend(decoded.problems)
            if name in text_only:
                problems.append(self.refused_kind(j, path, ctx.column(name), f"{where}.{name}"))
        known = [F.lit(n) for n in names]
        if block is None:
            extra = F.exists(F.map_keys(wire), lambda k: ~k.isin(*known))
        else:
            # a column the flags put in this image must be the contract's
            extra = F.exists(
                F.map_entries(block), lambda e: e["value"].isin(*held) & ~e["key"].isin(*known)
            )
            unflagged = F.exists(F.map_keys(wire), lambda k: ~F.map_contains_key(block, k))
            problems.append(
                Problem(
                    where,
                    "holds a column that has no exists flag",
                    F.coalesce(unflagged & block.isNotNull(), F.lit(False)),
                )
            )
        problems.append(
            Problem(
                where, "holds a column that is not in the contract", F.coalesce(extra, F.lit(False))
            )
        )
        if block is None:
            holds = F.map_keys(wire)
        else:
            holds = F.map_keys(F.map_filter(block, lambda _, flag: flag.isin(*held)))
        held_names = F.coalesce(holds, F.array().cast(ABSENT_TYPE))
        return Side(values, present, wire.isNotNull(), problems, where, held_names)

    def refused_kind(self, j: Column, path: Path, column: ConnectSchema, where: str) -> Problem:
        """A text-only cell (see :meth:`with_cell_kinds`) holding a JSON kind the core refuses
        for its column."""
        cell = j[CELL_KINDS]
        for step in path:
            cell = cell[step]
        if self.spec.rows is not None:  # this row's cells
            cell = F.try_element_at(cell, F.col(ROW_COL)["index"] + 1)
        cell = cell[column.field or ""]
        kind = F.schema_of_variant(cell)
        by_kind = {
            "boolean": kind == F.lit("BOOLEAN"),
            "json": kind.startswith("OBJECT") | kind.startswith("ARRAY"),
            # every other kind but a string and JSON null is a number
            "int": ~kind.isin("STRING", "BOOLEAN", "VOID")
            & ~kind.startswith("OBJECT")
            & ~kind.startswith("ARRAY"),
        }
        by_kind["float"] = by_kind["int"]
        refused = [by_kind[k] for k in sorted(cell_refused_kinds(column, self.spec.images))]
        bad = refused[0]
        for r in refused[1:]:
            bad = bad | r
        what = column.name or column.type
        return Problem(where, f"is not a {what}", F.coalesce(bad, F.lit(False)))

    def required(self, side: Side, ctx: Context) -> list[Problem]:
        """A column in the image holding null where the contract says it is required."""
        out = []
        for f in ctx.row.fields or ():
            name = f.field or ""
            if not f.optional and not f.has_default:
                out.append(
                    Problem(
                        f"{side.where}.{name}",
                        "is null but the column is required",
                        side.present[name] & side.values[name].isNull(),
                    )
                )
        return out

    # --- envelope facts -------------------------------------------------------------------------

    def table(self, j: Column, ctx: Context) -> tuple[Column, list[Problem]]:
        """The table struct (the contract's when the message names none and the spec says
        so) and the problems of its parts."""
        rule = self.spec.table
        parts: dict[str, Column] = {}
        problems: list[Problem] = []
        for part, path in rule.paths().items():
            value = self.read(j, path, ctx)
            text = F.variant_get(value, "$", "string") if _is_variant(self, path, ctx) else value
            if _is_variant(self, path, ctx):
                problems.append(
                    Problem(
                        self.json_path(path, ctx), "is not a string", _not_a_string(value, text)
                    )
                )
            parts[part] = F.nullif(text, F.lit("")) if rule.empty_is_null else text
        for path in rule.required:
            value = self.read(j, path, ctx)
            if _is_variant(self, path, ctx):
                value = F.variant_get(value, "$", "string")
            missing = value.isNull() | (value.cast("string") == F.lit(""))
            problems.append(
                Problem(self.json_path(path, ctx), "is missing (it names the table)", missing)
            )
        qualified = parts.pop("qualified", None)
        if qualified is not None and rule.qualified is not None:
            problems.append(
                Problem(
                    self.json_path(rule.qualified, ctx),
                    "is not a non-empty string",
                    qualified == F.lit(""),
                )
            )
            last = F.substring_index(qualified, ".", -1)
            owner = F.when(
                F.instr(qualified, ".") > 0, F.regexp_extract(qualified, r"^(.*)\.[^.]*$", 1)
            )
            parts["schema"], parts["name"] = owner, F.when(qualified.isNotNull(), last)
        none = F.lit(None)
        table = table_struct(
            parts.get("database", none), parts.get("schema", none), parts.get("name", none)
        )
        if rule.fallback:
            c = ctx.contract.table_id
            named = F.lit(False)
            for value in parts.values():
                named = named | value.isNotNull()
            table = F.when(named, table).otherwise(constant_table(c.database, c.schema, c.name))
        return table, problems

    def time(self, rules: Sequence[Time], j: Column, ctx: Context) -> Column:
        """Epoch milliseconds from the first rule that gives a value."""
        found: list[Column] = []
        for rule in rules:
            value = self.read(j, rule.at, ctx)
            if rule.unit == "iso":
                found.append(F.unix_millis(text_timestamp(stripped(value), "UTC")))
                continue
            if rule.text:
                value = int_text(value)
            if rule.unit == "s":
                found.append(F.try_multiply(value, F.lit(1000)))
            else:
                found.append(
                    floor_div(value, {"ms": 1, "us": 1_000, "ns": 1_000_000}[rule.unit])
                    if rule.unit != "ms"
                    else value
                )
        if not found:
            return F.lit(None).cast("long")
        return F.coalesce(*found) if len(found) > 1 else found[0]

    def position_block(self, j: Column, ctx: Context) -> Column:
        """The position's block (a JSON text parsed into a map)."""
        rule = self.spec.position
        assert rule.at is not None
        value = self.read(j, rule.at, ctx)
        if rule.at in self.spec.json_texts:
            return F.from_json(value, MapType(S, S))
        return value

    def position(self, j: Column, ctx: Context) -> Column:
        rule = self.spec.position
        parts: list[Column] = []
        named = {}
        for name, path in rule.named.items():
            value = self.read(j, path, ctx)
            named[name] = value if rule.default is None else F.coalesce(value, F.lit(rule.default))
        if self.spec.rows is not None:
            named[self.spec.rows.index] = F.col(ROW_COL)["index"]
        if named:
            parts.append(position_map(named))
        if rule.at:
            parts.append(self.block_position(j, ctx))
        if not parts:
            return F.create_map().cast(POSITION_TYPE)
        return F.map_concat(*parts) if len(parts) > 1 else parts[0]

    def block_position(self, j: Column, ctx: Context) -> Column:
        """The position entries of the block at ``position.at``."""
        rule = self.spec.position
        assert rule.at
        block = self.position_block(j, ctx)
        if rule.by_connector is not None:
            return connector_position(block, rule, ctx)
        if rule.pairs:
            return pairs_position(block)
        if rule.at in self.spec.json_texts or rule.at in self.map_blocks():
            if rule.keys is not None:
                wanted = [F.lit(k) for k in rule.keys]
                block = F.map_filter(block, lambda k, _v: k.isin(*wanted))
            if not rule.keep_nulls:
                block = F.map_filter(block, lambda _k, v: v.isNotNull())
            return F.coalesce(block, F.create_map().cast(POSITION_TYPE))
        return position_map({k: block[k] for k in rule.keys or ()})

    def unique_key(self, j: Column, ctx: Context) -> Decoded | None:
        """The in-envelope key struct (CDL's ``unique``) decoded by the contract's key columns
        (a null required key column there is bad, as in the core), or None."""
        if not ctx.contract.key or not self.spec.key.unique:
            return None
        at = self.spec.key.unique
        return ctx.json_key(self.read(j, at, ctx), self.json_path(at, ctx))

    def key(
        self,
        j: Column,
        key_text: Column | None,
        before: Column,
        after: Column,
        ctx: Context,
        unique: Decoded | None = None,
    ) -> tuple[Column, list[Problem]]:
        """The first source (Kafka key, the key struct ``unique``, the row image, the record's
        key) that holds every key column (see ``contracts.formats._typing.key_from``); the
        problems of the Kafka key (``unique``'s are the caller's)."""
        if not ctx.contract.key:
            return F.lit(None).cast(ctx.key_type), []
        found: list[Column] = []
        problems: list[Problem] = []
        if self.spec.key.kafka and key_text is not None:
            kafka, kafka_problems = connect_key(ctx, key_text)
            found.append(ctx.key_from_image(kafka))
            problems += kafka_problems
        if unique is not None:
            found.append(ctx.key_from_image(unique.value))
        found += [ctx.key_from_image(after), ctx.key_from_image(before)]
        if self.spec.key.record:
            found.append(self.record_key(j, ctx))
        return F.coalesce(*found) if len(found) > 1 else found[0], problems

    def record_key(self, j: Column, ctx: Context) -> Column:
        """The record's own key, as the key struct (a Spark module says how to read it)."""
        raise NotImplementedError(f"{self.name}: a record key needs a Spark module")


# --- helpers ----------------------------------------------------------------------------------------


def _either(
    a: Column | None, b: Column | None, both: Callable[[Column, Column], Column]
) -> Column | None:
    """``both(a, b)``, or ``None`` where either is unknown."""
    return None if a is None or b is None else both(a, b)


def _chosen_by(holds: Column) -> Callable[[Column, Column], Column]:
    """One image's value where it ``holds``, the other's elsewhere."""
    return lambda one, other: F.when(holds, one).otherwise(other)


def _holds(gate: Column | None, side: Side) -> Column:
    """Where an image rule's case holds: its op gate (if any) and its image being there."""
    return side.there if gate is None else gate & side.there


def _is_variant(decoder: SpecDecoder, path: Path, ctx: Context) -> bool:
    type_: DataType = decoder.envelope_type(ctx)
    for step in path:
        if not isinstance(type_, StructType):
            return False
        type_ = type_[step].dataType
    return isinstance(type_, VariantType)


def _not_a_string(value: Column, text: Column) -> Column:
    """A JSON value that is there but is not a string: only a text that could be one (a number,
    true/false, an array or an object) is asked its kind."""
    could = could_be_no_string(text)
    return F.coalesce(
        could & ~F.is_variant_null(value) & (F.schema_of_variant(value) != F.lit("STRING")),
        F.lit(False),
    )


def int_text(value: Column) -> Column:
    """An integer from a JSON number or a string of ASCII digits (as the core's
    ``epoch_count``); else null."""
    text = stripped(value)
    return F.when(text.rlike(r"^-?[0-9]+$"), text.try_cast("long"))


def _contract_connector(ctx: Context) -> str | None:
    named = ctx.contract.option("connector")
    return named if isinstance(named, str) else None


def connector_position(source: Column, rule: Position, ctx: Context) -> Column:
    """Debezium's position fields by connector: the contract's connector's when it names one,
    else the message's (see ``contracts.formats.spec.connector_keys``)."""
    assert rule.by_connector is not None
    named = _contract_connector(ctx)
    empty = F.create_map().cast(POSITION_TYPE)
    if named is not None and named.lower() in rule.by_connector:
        chosen = position_map({k: source[k] for k in connector_keys(rule, {}, named)})
        return F.when(source.isNotNull(), chosen).otherwise(empty)
    connector = F.lower(source[rule.connector])
    out = position_map({k: source[k] for k in connector_keys(rule, {}, None)})
    for name, keys in rule.by_connector.items():
        chosen = position_map({k: source[k] for k in keys})
        out = F.when(connector == F.lit(name), chosen).otherwise(out)
    return F.when(source.isNotNull(), out).otherwise(empty)


def pairs_position(props: Column) -> Column:
    """``{name: value}`` of ``[{name, value}]`` (the last of a repeated name wins; nulls out)."""
    props = F.coalesce(props, F.array())
    last = F.filter(
        props,
        lambda p, i: (
            p["name"].isNotNull()
            & ~F.exists(F.slice(props, i + 2, F.size(props)), lambda q: q["name"] == p["name"])
        ),
    )
    kept = F.filter(last, lambda p: p["value"].isNotNull())
    return F.map_from_entries(F.transform(kept, lambda p: F.struct(p["name"], p["value"])))


def connect_key(ctx: Context, key_text: Column) -> tuple[Column, list[Problem]]:
    """The Kafka key ``{schema, payload}`` or a bare key object, decoded. A key that is not
    JSON, or whose fields have the wrong JSON type, is a problem (not silently replaced by the
    key columns of the row)."""
    wire = ctx.key_wire
    schema = StructType(
        [
            StructField("payload", wire),
            StructField("schema", _KEY_SCHEMA),
            *wire.fields,
            StructField(CORRUPT_COL, S),
        ]
    )
    k = F.from_json(key_text, schema, PARSE_OPTIONS)
    payload = ctx.json_key(k["payload"], "$key.payload")
    bare = ctx.json_key(F.struct(*[k[f.name].alias(f.name) for f in wire.fields]), "$key")
    any_bare = F.lit(False)
    for f in ctx.key_schema.fields or ():
        any_bare = any_bare | ~json_absent(k[f.field or ""], f)
    has_payload = k["payload"].isNotNull()
    key = F.when(has_payload, payload.value).when(any_bare, bare.value)
    unparsed = key_text.isNotNull() & k[CORRUPT_COL].isNotNull()
    problems = [
        Problem("$key", NOT_JSON_KEY, unparsed),
        key_schema_problem(ctx, k["schema"]).gated(~unparsed & (has_payload | ~any_bare)),
        *[p.gated(~unparsed & has_payload) for p in payload.problems],
        *[p.gated(~unparsed & ~has_payload & any_bare) for p in bare.problems],
    ]
    return key, problems


#: What a Kafka key's embedded schema is read for: its type and each field's name, type and
#: logical name (see ``contracts.formats._connect.key_signature``).
_KEY_SCHEMA: Final = StructType(
    [
        StructField("type", S),
        StructField(
            "fields",
            ArrayType(StructType([StructField(n, S) for n in ("field", "type", "name")])),
        ),
    ]
)


def key_schema_problem(ctx: Context, schema: Column) -> Problem:
    """A key's embedded schema (when given) that does not state the contract's key columns:
    the key is decoded by those, so the message is bad (as in the core)."""
    want = key_signature(ctx.contract)
    expected = F.array(
        *[
            F.struct(
                F.lit(field).alias("field"),
                F.lit(type_).alias("type"),
                F.lit(name).cast(S).alias("name"),
            )
            for field, type_, name in want
        ]
    )
    got = F.transform(
        schema["fields"],
        lambda f: F.struct(
            f["field"].alias("field"), f["type"].alias("type"), f["name"].alias("name")
        ),
    )
    agrees = (schema["type"] == F.lit("struct")) & got.eqNullSafe(expected)
    said = f"does not state the contract's key columns {describe_key(want)}"
    return Problem("$key.schema", said, schema.isNotNull() & ~F.coalesce(agrees, F.lit(False)))


def _condition_leaves(condition: object) -> list[tuple[Path, DataType]]:
    if isinstance(condition, Equals):
        bools = all(isinstance(v, bool) for v in condition.values)
        return [(condition.at, BooleanType() if bools else S)]
    return [(p, S) for p in condition_paths(condition)]  # type: ignore[arg-type]


def _insert(tree: dict[str, object], path: Path, type_: DataType) -> None:
    node = tree
    for step in path[:-1]:
        child = node.setdefault(step, {})
        if not isinstance(child, dict):
            return  # a leaf already holds the whole block
        node = child
    if path[-1] not in node or not isinstance(node[path[-1]], dict):
        node.setdefault(path[-1], type_)


def _struct_of(tree: Mapping[str, object]) -> StructType:
    return StructType(
        [
            StructField(name, _struct_of(child) if isinstance(child, dict) else child)  # type: ignore[arg-type]
            for name, child in tree.items()
        ]
    )


# --- the registry ---------------------------------------------------------------------------------

_DECODERS: dict[str, SpecDecoder] = {}


def decoder_for(name: str) -> SpecDecoder:
    """The Spark decoder of a registered format: its Spark module's (named in its
    :data:`~contracts.formats.FORMATS` entry), else the generic one built from its spec."""
    found = _DECODERS.get(name)
    if found is not None:
        return found
    fmt = get_format(name)
    if fmt.input_kind == "avro":
        raise UnknownFormatError(
            f"{name} records are read by spark_bindings.avro, not parsed as text"
        )
    module = FORMATS[name].spark
    make: Callable[[str, FormatSpec], SpecDecoder] = SpecDecoder
    if module is not None:
        make = importlib.import_module(f"spark_bindings.formats.{module}").Decoder
    found = _DECODERS[name] = make(name, fmt.spec)
    return found
