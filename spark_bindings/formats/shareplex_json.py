"""``shareplex-json``: a table name inside a text block must still be a JSON string.

``meta`` is a text block (``FormatSpec.text_blocks``): Spark parses it as a map of texts, where a
JSON ``true`` and the string ``"true"`` read alike. The core refuses a table part that is not a
string (``read_table``), so the parse also keeps the JSON kind of each table part a text block
holds — read again, as a variant, only from a message whose table text could be something other
than a string (``true``/``false``, a number, an array or an object).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructField, StructType, VariantType

from contracts.formats.spec import Path
from spark_bindings.build import SpecDecoder
from spark_bindings.context import Context
from spark_bindings.expressions import Problem
from spark_bindings.parse import PARSE_OPTIONS

#: The parse's field holding the table parts read as variants (null: not read again).
_KINDS = "__cdc_table_kinds"


class Decoder(SpecDecoder):
    """SharePlex: the table parts in ``meta`` keep their JSON kind."""

    def _blocked_table_paths(self) -> list[Path]:
        blocks = self.map_blocks()
        return [
            path
            for path in self.spec.table.paths().values()
            if any(path[: len(b)] == b for b in blocks)
        ]

    def parse(self, text: Column, ctx: Context) -> Column:
        whole = super().parse(text, ctx)
        paths = self._blocked_table_paths()
        if not paths:
            return whole
        could = F.lit(False)
        for path in paths:
            could = could | _could_be_no_string(self.read(whole, path, ctx))
        kinds = F.from_json(text, _variants_at(paths), PARSE_OPTIONS)
        return whole.withField(_KINDS, F.when(F.coalesce(could, F.lit(False)), kinds))

    def table(self, j: Column, ctx: Context) -> tuple[Column, list[Problem]]:
        table, problems = super().table(j, ctx)
        for path in self._blocked_table_paths():
            value = j[_KINDS]
            for step in path:
                value = value[step]
            no_string = ~F.is_variant_null(value) & (F.schema_of_variant(value) != F.lit("STRING"))
            problems.append(
                Problem(
                    self.json_path(path, ctx),
                    "is not a string",
                    F.coalesce(no_string, F.lit(False)),
                )
            )
        return table, problems


def _could_be_no_string(text: Column) -> Column:
    """A text block's value that a JSON value other than a string would also read as."""
    first = F.substring(text, 1, 1)
    return text.isin("true", "false") | first.isin("[", "{", "-", *"0123456789")


def _variants_at(paths: list[Path]) -> StructType:
    tree: dict[str, object] = {}
    for path in paths:
        node = tree
        for step in path[:-1]:
            child = node.setdefault(step, {})
            assert isinstance(child, dict)
            node = child
        node[path[-1]] = VariantType()
    return _struct(tree)


def _struct(tree: dict[str, object]) -> StructType:
    fields: list[StructField] = []
    for name, sub in tree.items():
        type_: DataType = _struct(sub) if isinstance(sub, dict) else sub  # type: ignore[assignment]
        fields.append(StructField(name, type_))
    return StructType(fields)
