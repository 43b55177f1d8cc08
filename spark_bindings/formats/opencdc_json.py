"""``opencdc-json``: data that is a JSON object or raw base64 bytes, which no table can say.

A data value (``payload.before``/``after``, the record's ``key``) is structured — a JSON object
— or raw: base64 text. Raw bytes that hold a JSON object are read as structured data; other raw
bytes fill the contract's bytes column named by the format (``images.raw``), and without that
column they are an error, as in the core.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import MapType, StringType

from contracts.formats.spec import Path
from spark_bindings.build import Side, SpecDecoder
from spark_bindings.context import Context
from spark_bindings.expressions import Problem, padded_base64

_TEXT_MAP = MapType(StringType(), StringType())


def structured(text: Column) -> tuple[Column, Column, Column]:
    """(fields as a text map, raw bytes, whether the text is neither an object nor base64) of
    one data value."""
    is_object = F.startswith(F.ltrim(text), F.lit("{"))
    raw = F.when(text.isNotNull() & ~is_object, padded_base64(text))
    raw_text = raw.cast("string")
    raw_json = F.when(F.startswith(raw_text, F.lit("{")), raw_text)
    fields_map = F.from_json(
        F.when(is_object, text).otherwise(raw_json), _TEXT_MAP, {"mode": "PERMISSIVE"}
    )
    undecodable = text.isNotNull() & ~is_object & raw.isNull()
    return fields_map, raw, undecodable


class Decoder(SpecDecoder):
    """OpenCDC records: structured or raw data."""

    def image(self, j: Column, path: Path, ctx: Context) -> Side:
        text = self.read(j, path, ctx)
        where = self.json_path(path, ctx)
        fields_map, raw, undecodable = structured(text)
        side = self.text_image(j, fields_map, path, where, ctx)
        is_raw = raw.isNotNull() & fields_map.isNull()
        column = self.spec.images.raw
        problems = [
            Problem(where, "is neither a JSON object nor valid base64", undecodable),
            *[p.gated(fields_map.isNotNull()) for p in side.problems],
        ]
        target = ctx.row.get_field(column) if column else None
        if column is not None and target is not None and target.type == "bytes":
            side.values[column] = F.when(is_raw, raw).otherwise(side.values[column])
            side.present = {
                n: h | is_raw if n == column else h & ~is_raw for n, h in side.present.items()
            }
            # raw data holds its bytes column only
            side.held = F.when(is_raw, F.array(F.lit(column))).otherwise(side.held)
        else:
            problems.append(
                Problem(
                    where,
                    f"is raw data (base64 bytes that are not a JSON object) and the contract has "
                    f"no bytes column {column!r} to hold it",
                    is_raw,
                )
            )
        side.problems = problems
        side.there = text.isNotNull()
        return side

    def cell_texts(self, j: Column, path: Path, ctx: Context) -> Column:
        """Structured data's fields (raw data's cells are not asked their JSON kind)."""
        return structured(self.read(j, path, ctx))[0]

    def record_key(self, j: Column, ctx: Context) -> Column:
        """The record's own structured key, decoded to the key columns (raw bytes hold none)."""
        assert self.spec.key.record is not None
        fields_map, _raw, _undecodable = structured(self.read(j, self.spec.key.record, ctx))
        values = {
            k: ctx.text_value(k, F.try_element_at(fields_map, F.lit(k)), f"$.key.{k}").value
            for k in ctx.contract.key
        }
        return ctx.key_from_image(F.struct(*[v.alias(k) for k, v in values.items()]))

    def shape_problems(self, j: Column, op: Column, ctx: Context) -> list[Problem]:
        """A record key that is neither a JSON object nor base64 is an error, as in the core."""
        out = super().shape_problems(j, op, ctx)
        if self.spec.key.record is not None:
            _fields, _raw, undecodable = structured(self.read(j, self.spec.key.record, ctx))
            where = self.json_path(self.spec.key.record, ctx)
            out.append(Problem(where, "is neither a JSON object nor valid base64", undecodable))
        return out
