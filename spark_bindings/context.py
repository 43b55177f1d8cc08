"""What a format decoder needs to know about one contract, computed once per ``decode_changes``."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StringType, StructField, StructType

from contracts.contract import Contract
from contracts.formats.spec import DEFAULT_TEXT, TextConventions
from contracts.schema import ConnectSchema, struct
from spark_bindings.expressions import (
    Decoded,
    Problem,
    as_is,
    decode_json_value,
    decode_text_value,
    json_absent,
    json_wire_type,
)
from spark_bindings.schema import spark_type


@dataclass(frozen=True)
class Context:
    """A contract with its Spark types (decoded and wire) for the row and the key.

    ``staged`` collects leaf expressions that become their own columns before the feed is
    assembled: each decoded value is then computed once per row and referenced by name (Spark
    does not share an expression between a conditional branch and a check). ``texts`` does the
    same one projection earlier for the wire values that text rules read (stripped, when the
    rule strips), so that each is computed once.
    """

    contract: Contract
    staged: dict[str, Column] = field(default_factory=dict)
    texts: dict[str, Column] = field(default_factory=dict)
    #: Stage a text already stripped (when its rule strips), so the strip runs once (``False``:
    #: the raw text is staged and each read strips it again). ``decode_changes`` stages
    #: stripped texts for every format: once, the strip's code is smaller than its repeats.
    strip_staged_texts: bool = False
    #: The parse expression while the feed is built over it to collect the texts (see
    #: ``decode._texts_over_parse``); ``None`` in the real feed, which reads the parse's columns.
    over_parse: Column | None = None

    def stage(self, expr: Column) -> Column:
        """Make ``expr`` a column of the staging projections (the one after any staged column
        it reads, see :meth:`staged_layers`); returns a reference to it."""
        name = f"__cdc_s{len(self.staged)}"
        self.staged[name] = expr
        return F.col(name)

    def staged_layers(self) -> list[dict[str, Column]]:
        """The staged columns as successive projections: a staged expression that reads
        another staged column comes one projection after it (a decoder can stage the shared
        parts of a value, then the value over them)."""
        depth: dict[str, int] = {}
        layers: list[dict[str, Column]] = []
        for name, expr in self.staged.items():
            reads = _STAGED_NAME.findall(str(expr))
            level = 1 + max((depth[r] for r in reads if r in depth), default=-1)
            depth[name] = level
            if level == len(layers):
                layers.append({})
            layers[level][name] = expr
        return layers

    def stage_text(self, expr: Column) -> Column:
        """Make a wire text (stripped, when its rule strips) a column of the projection before
        the staging one: a text rule reads its input several times, and each read of an
        expression repeats its code and its work."""
        name = f"__cdc_t{len(self.texts)}"
        self.texts[name] = expr
        return F.col(name)

    def stage_decoded(self, decoded: Decoded) -> Decoded:
        """A decoded leaf computed once: its value staged, its problems rebuilt on the staged
        value's null flag."""
        ref = self.stage(decoded.value)
        problems = tuple(
            Problem(p.path, p.message, p.rebuild(ref.isNull())) if p.rebuild is not None else p
            for p in decoded.problems
        )
        return Decoded(ref, problems)

    @cached_property
    def row(self) -> ConnectSchema:
        return self.contract.row_schema

    @cached_property
    def key_schema(self) -> ConnectSchema:
        """The key columns as a struct (empty when the contract names no key)."""
        return self.contract.key_schema or struct([])

    @cached_property
    def row_type(self) -> StructType:
        return _as_struct(spark_type(self.row, "decoded"))

    @cached_property
    def row_wire(self) -> StructType:
        """The row as ``from_json`` parses it (Decimals as variants, see ``json_wire_type``)."""
        return _as_struct(json_wire_type(self.row, spark_type(self.row, "wire")))

    @cached_property
    def key_type(self) -> StructType:
        return _as_struct(spark_type(self.key_schema, "decoded")) if self.contract.key else _EMPTY

    @cached_property
    def key_wire(self) -> StructType:
        if not self.contract.key:
            return _EMPTY
        return _as_struct(json_wire_type(self.key_schema, spark_type(self.key_schema, "wire")))

    @cached_property
    def row_text(self) -> StructType:
        """The row with every column as a string (formats that carry text values)."""
        return StructType([StructField(n, StringType()) for n in self.row.field_names()])

    def column(self, name: str) -> ConnectSchema:
        return self.row.require_field(name)

    # --- decoding images ------------------------------------------------------------------------

    def json_image(self, wire: Column, path: str) -> Decoded:
        """A row image parsed with :attr:`row_wire`, decoded to :attr:`row_type` (leaves staged)."""
        values: list[Column] = []
        problems: list[Problem] = []
        for f, spark_field in zip(self.row.fields or (), self.row_type.fields, strict=True):
            name = f.field or spark_field.name
            leaf = decode_json_value(
                wire[name], f, spark_field.dataType, f"{path}.{name}", self.stage_text
            )
            if leaf.problems:
                leaf = self.stage_decoded(leaf)
            values.append(leaf.value.alias(name))
            problems += [p.narrowed(wire.isNotNull()) for p in leaf.problems]
            if not f.optional and not f.has_default:
                problems.append(
                    Problem(
                        f"{path}.{name}",
                        "is null but the column is required",
                        wire.isNotNull() & json_absent(wire[name], f),
                    )
                )
        return Decoded(F.when(wire.isNotNull(), F.struct(*values)), tuple(problems))

    def json_key(self, wire: Column, path: str) -> Decoded:
        return decode_json_value(wire, self.key_schema.as_optional(), self.key_type, path)

    def text_value(
        self, name: str, text: Column, path: str, dialect: TextConventions = DEFAULT_TEXT
    ) -> Decoded:
        """One column's text value decoded to its Spark type."""
        target = self.row_type[name].dataType
        stage: Callable[[Column], Column]
        if self.strip_staged_texts:
            stage = self.stage_text
        else:
            text, stage = self.stage_text(text), as_is
        decoded = decode_text_value(text, self.column(name), target, path, dialect, stage=stage)
        return self.stage_decoded(decoded) if decoded.problems else decoded

    def key_from_image(self, image: Column) -> Column:
        """The key struct from a decoded row image (null unless every key column has a value)."""
        if not self.contract.key:
            return F.lit(None).cast(self.key_type)
        complete = image.isNotNull()
        for k in self.contract.key:
            complete = complete & image[k].isNotNull()
        return F.when(complete, F.struct(*[image[k].alias(k) for k in self.contract.key]))


def required_problems(
    ctx: Context, values: dict[str, Column], present: dict[str, Column], path: str
) -> list[Problem]:
    """A present column holding null where the contract says it is required."""
    out = []
    for f in ctx.row.fields or ():
        name = f.field or ""
        if not f.optional and not f.has_default:
            out.append(
                Problem(
                    f"{path}.{name}",
                    "is null but the column is required",
                    present[name] & values[name].isNull(),
                )
            )
    return out


def _as_struct(t: DataType) -> StructType:
    assert isinstance(t, StructType), t
    return t


_EMPTY = StructType([])
#: A staged column's name (see ``Context.stage``) as it appears in an expression's text.
_STAGED_NAME = re.compile(r"\b__cdc_s[0-9]+\b")
