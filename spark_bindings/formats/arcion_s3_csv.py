"""``arcion-s3-csv``: one CSV record per message, split natively with ``from_csv`` (blank
lines around it are passed over; a line break outside quoted cells, which starts a second
record, is an ``_error``, as the core's reader finds two records).

For a table of X columns a snapshot row has X cells and a realtime row 3X+3: X triplets
``NEW_VAL, OLD_VAL, EXISTS_VAL`` then ``opType``, ``cursor`` (JSON) and ``operationcount``.
The cells are read into a struct of 3X+4 strings from the line with a sentinel cell appended:
where the sentinel lands tells how many cells the line had (a line of any other width is an
``_error``). The row is then reshaped into Arcion S3 JSON's document (``before``/``after``/
``exists``/``opType``/``cursor``) and decoded from the format's tables (``arcion-s3-csv``'s spec
is Arcion S3 JSON's, with ``NULL`` as the SQL NULL literal and the contract's table). Column names come from ``options.column_order`` (else the contract's
columns). Header rows (a realtime header, recognized by its last three names; a snapshot
header when ``options.header`` is true and the cells are the column names) are control records
of kind ``other``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import MapType, StringType

from contracts.formats.arcion_s3_csv import METADATA_COLUMNS, column_names
from spark_bindings.build import SpecDecoder
from spark_bindings.context import Context
from spark_bindings.expressions import Problem
from spark_bindings.feed import Feed
from spark_bindings.parse import NOT_UTF8

#: Appended to every line: its position among the parsed cells is the line's cell count.
SENTINEL: Final = "\u0001cdc-end\u0001"
CSV_OPTIONS: Final = {"mode": "PERMISSIVE", "escape": '"', "quote": '"'}
#: Blank lines (whitespace and commas only: rows of blank cells, which the core's CSV reader
#: passes over) before the record and after it, with the record's line terminator.
_BLANK_LINES: Final = r"^(?:[\s,]*[\r\n])+|(?:[\r\n][\s,]*)+$"
#: A cell as Python's csv reader reads one: quoted (``""`` a quote; text after the closing
#: quote joins the cell) or not (a quote past its first character is literal).
_CELL: Final = r'(?:"(?:[^"]|"")*+"[^,\r\n]*+|[^",\r\n][^,\r\n]*+)?+'
#: A line break outside quoted cells: the end of a record, so the text holds a second one
#: (from_csv would read it into a cell; the core's reader finds two records and refuses).
_RECORD_BREAK: Final = rf"^(?:{_CELL},)*+{_CELL}[\r\n]"


class Decoder(SpecDecoder):
    """Arcion S3 CSV rows, reshaped into Arcion S3 JSON's document and decoded from the
    format's tables."""

    object_messages = False

    def parse(self, text: Column, ctx: Context) -> Column:
        width = 3 * len(column_names(ctx.contract)) + 4
        schema = ", ".join(f"c{i} STRING" for i in range(width))
        record = F.regexp_replace(text, _BLANK_LINES, "")
        line = F.concat(record, F.lit("," + SENTINEL))
        return F.when(~record.rlike(_RECORD_BREAK), F.from_csv(line, schema, CSV_OPTIONS))

    def unreadable(self, text: Column, ctx: Context) -> Column:
        """Only bytes that are not UTF-8 make a CSV row unreadable: CSV has no escapes, so a
        ``\\ud800`` in a cell is six characters of text, as the core reads it."""
        return F.when(~F.is_valid_utf8(text), F.lit(NOT_UTF8))

    def parse_problem(self, present: Column, j: Column) -> Problem:
        said = "is not one CSV record (a line break outside quoted cells starts another)"
        return Problem("$", said, present & j.isNull())

    def parse_report(self, parsed: Column, ctx: Context) -> Column | None:
        return None  # every cell is text: a line parses, or it is not CSV

    def feed(self, j: Column, key_text: Column | None, ctx: Context) -> Feed:
        names = column_names(ctx.contract)
        x = len(names)
        # an empty cell is the empty text, as Python's csv reads it (Spark's reader makes an
        # unquoted one null whatever its options say); ``NULL`` is the spec's null_text
        cells = [F.coalesce(j[f"c{i}"], F.lit("")) for i in range(3 * x + 4)]
        count = F.array_position(F.array(*cells), F.lit(SENTINEL)) - 1
        snapshot = count == F.lit(x)
        realtime = count == F.lit(3 * x + 3)
        header = self.header(cells, names, snapshot, realtime, ctx)
        wire = F.when(snapshot, self.snapshot_wire(cells, names)).otherwise(
            self.realtime_wire(cells, names)
        )
        inner = super().feed(wire, key_text, ctx)
        shaped = snapshot | realtime
        problems = [
            Problem(
                "$",
                f"has neither {x} cells (snapshot) nor {3 * x + 3} (realtime)",
                ~shaped & ~header,
            ),
            *self.mode_problems(snapshot, realtime, header, ctx),
            *[p.gated(shaped & ~header) for p in inner.problems],
        ]
        return replace(
            inner,
            op=F.when(snapshot, F.lit("r")).otherwise(inner.op),
            control=F.when(header, F.lit("other")),
            problems=tuple(problems),
        )

    @staticmethod
    def mode_problems(
        snapshot: Column, realtime: Column, header: Column, ctx: Context
    ) -> list[Problem]:
        """A row of a shape the contract's ``mode`` (snapshot, realtime or both) does not
        allow, as the Python decoder refuses it."""
        mode = str(ctx.contract.option("mode", "snapshot"))
        return [
            Problem("$", f"a {shape} row in a {mode} contract", is_shape & ~header)
            for shape, is_shape in (("snapshot", snapshot), ("realtime", realtime))
            if shape not in mode
        ]

    @staticmethod
    def header(
        cells: list[Column], names: list[str], snapshot: Column, realtime: Column, ctx: Context
    ) -> Column:
        """A realtime header (its last three names), or the snapshot header when the contract
        says the files have one."""
        x = len(names)
        tail = [F.lower(F.trim(c)) for c in cells[3 * x : 3 * x + 3]]
        is_realtime = realtime
        for got, want in zip(tail, METADATA_COLUMNS, strict=True):
            is_realtime = is_realtime & (got == F.lit(want.lower()))
        out = F.coalesce(is_realtime, F.lit(False))
        if ctx.contract.option("header", False):
            is_snapshot = snapshot
            for cell, name in zip(cells, names, strict=False):
                is_snapshot = is_snapshot & (F.trim(cell) == F.lit(name))
            out = out | F.coalesce(is_snapshot, F.lit(False))
        return out

    def snapshot_wire(self, cells: list[Column], names: list[str]) -> Column:
        """X cells: the after image of an insert (every column present; its op is then the
        snapshot's ``r``)."""
        spec = self.spec
        assert spec.images.exists is not None and spec.position.at
        insert = next(code for code, op in spec.ops.codes.items() if op == "c")
        after_only = next(
            f for f, held in spec.images.exists.flags.items() if held == (False, True)
        )
        return F.struct(
            F.lit(None).cast(_TEXT_MAP).alias(spec.images.before[0]),
            _text_map(names, cells[: len(names)]).alias(spec.images.after[0]),
            _text_map(names, [F.lit(after_only)] * len(names)).alias(spec.images.exists.at[0]),
            F.lit(insert).alias(spec.ops.at[0]),
            F.lit("{}").alias(spec.position.at[0]),
        )

    def realtime_wire(self, cells: list[Column], names: list[str]) -> Column:
        """3X+3 cells: NEW/OLD/EXISTS triplets, then opType and cursor."""
        spec = self.spec
        assert spec.images.exists is not None and spec.position.at
        x = len(names)
        new = _text_map(names, [cells[3 * i] for i in range(x)])
        old = _text_map(names, [cells[3 * i + 1] for i in range(x)])
        flags = _text_map(names, [F.trim(cells[3 * i + 2]) for i in range(x)])
        return F.struct(
            old.alias(spec.images.before[0]),
            new.alias(spec.images.after[0]),
            flags.alias(spec.images.exists.at[0]),
            cells[3 * x].alias(spec.ops.at[0]),
            cells[3 * x + 1].alias(spec.position.at[0]),
        )


_TEXT_MAP: Final = MapType(StringType(), StringType())


def _text_map(names: list[str], cells: list[Column]) -> Column:
    """``{name: cell}`` (the images and flags as the format's document holds them)."""
    pairs: list[Column] = []
    for name, cell in zip(names, cells, strict=True):
        pairs += [F.lit(name), cell]
    return F.create_map(*pairs)
