"""For measurement only: switch off checks the Spark decoder gained after f2389db, to see
what each costs (benchmarks/spark_decode_commits.py ``--checks-off``).

Each switch replaces one function of THIS tree's ``spark_bindings`` in the running process,
so the decoder built afterwards lacks that check. A decoder built this way is wrong on the
inputs the check exists for; nothing outside benchmarks/ imports this module. The checks
listed in :data:`LEFT_ON` cannot be switched off by replacing one function and stay on, so a
decoder with every switch off still does more than f2389db's did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

#: What stays checked with every switch off (the f2389db decoder checked none of these).
LEFT_ON: Final = (
    "control records' images",
    "integers past 2^63 read exactly",
    "the Kafka key against the contract (the benchmark's messages have no key)",
)


def _utf8() -> None:
    """No whole-text UTF-8 validation and no lone-surrogate search (``parse.not_text``)."""
    from pyspark.sql import functions as F

    from spark_bindings import parse

    def not_text(text: Any) -> Any:
        return F.lit(None).cast("string")

    parse.not_text = not_text


def _string_variants() -> None:
    """Connect string and bytes columns parsed as typed strings again, not as variants (a
    JSON number or boolean there is then read as its text, as f2389db read it)."""
    from spark_bindings import expressions

    expressions.variant_wire = expressions._is_decimal_variant


def _absent() -> None:
    """``_absent`` always empty (f2389db had no such column)."""
    from pyspark.sql import functions as F

    from spark_bindings import build
    from spark_bindings.feed import ABSENT_TYPE

    def absent_names(self: Any, *args: Any, **kwargs: Any) -> Any:
        return F.array().cast(ABSENT_TYPE)

    build.SpecDecoder.absent_names = absent_names  # type: ignore[method-assign]


def _text_kinds() -> None:
    """Text cells (Canal, Arcion S3, plain-JSON images) not read again as variants to judge
    their JSON kind (``SpecDecoder.text_only_columns`` lists none)."""
    from spark_bindings import build

    def text_only_columns(self: Any, ctx: Any) -> list[str]:
        return []

    build.SpecDecoder.text_only_columns = text_only_columns  # type: ignore[method-assign]


SWITCHES: Final[dict[str, Callable[[], None]]] = {
    "utf8": _utf8,
    "string-variants": _string_variants,
    "absent": _absent,
    "text-kinds": _text_kinds,
}


def switch_off(names: list[str]) -> None:
    """Apply the named switches (see :data:`SWITCHES`) before any decoder is built."""
    unknown = set(names) - set(SWITCHES)
    if unknown:
        raise SystemExit(f"unknown check(s) {sorted(unknown)} (known: {sorted(SWITCHES)})")
    for name in names:
        SWITCHES[name]()
