"""For measurement only: switch off checks the Spark decoder gained after f2389db, to see
what each costs (benchmarks/spark_decode_checks.py, and spark_decode_commits.py
``--checks-off``).

Each switch replaces one function of THIS tree's ``spark_bindings`` while it is on, so a
decoder built meanwhile lacks that check. Such a decoder is wrong on the inputs the check
exists for; nothing outside benchmarks/ imports this module. The checks in :data:`LEFT_ON`
cannot be switched off by replacing one function and stay on, so a decoder with every switch
off still does more than f2389db's did.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, Final
from unittest import mock

#: What stays checked with every switch off (the f2389db decoder checked none of these).
LEFT_ON: Final = (
    "control records' images",
    "integers past 2^63 read exactly",
    "the Kafka key against the contract (the benchmark's messages have no key)",
)


def _no_problem(*_args: Any, **_kwargs: Any) -> Any:
    from pyspark.sql import functions as F

    return F.lit(None).cast("string")


def _nothing_absent(*_args: Any, **_kwargs: Any) -> Any:
    from pyspark.sql import functions as F

    from spark_bindings.feed import ABSENT_TYPE

    return F.array().cast(ABSENT_TYPE)


def _utf8() -> Any:
    """No whole-text UTF-8 validation and no lone-surrogate search (``parse.not_text``)."""
    from spark_bindings import parse

    return mock.patch.object(parse, "not_text", _no_problem)


def _string_variants() -> Any:
    """Connect string and bytes columns parsed as typed strings, not as variants (a JSON
    number or boolean there is then read as its text, as f2389db read it)."""
    from spark_bindings import expressions

    return mock.patch.object(expressions, "variant_wire", expressions._is_decimal_variant)


def _absent() -> Any:
    """``_absent`` always empty (f2389db had no such column)."""
    from spark_bindings import build

    return mock.patch.object(build.SpecDecoder, "absent_names", staticmethod(_nothing_absent))


def _text_kinds() -> Any:
    """Text cells (Canal, Arcion S3, plain-JSON images) not read again as variants to judge
    their JSON kind (``SpecDecoder.text_only_columns`` lists none)."""
    from spark_bindings import build

    return mock.patch.object(build.SpecDecoder, "text_only_columns", lambda _self, _ctx: [])


SWITCHES: Final[dict[str, Callable[[], Any]]] = {
    "utf8": _utf8,
    "string-variants": _string_variants,
    "absent": _absent,
    "text-kinds": _text_kinds,
}


@contextlib.contextmanager
def switched_off(names: list[str]) -> Iterator[None]:
    """The named checks (see :data:`SWITCHES`) off while the block runs."""
    unknown = set(names) - set(SWITCHES)
    if unknown:
        raise SystemExit(f"unknown check(s) {sorted(unknown)} (known: {sorted(SWITCHES)})")
    with contextlib.ExitStack() as stack:
        for name in names:
            stack.enter_context(SWITCHES[name]())
        yield
