"""A DataFrame under construction that remembers how it was made from its input.

Building a decode issues thousands of Py4J calls (every Column operator is one or more round
trips to the JVM): 1-3 s for a contract of a dozen columns, paid again by every call of
``decode_changes`` — in ``foreachBatch``, once per micro-batch. The decoders only ever select
and filter, so :class:`Frame` records those steps; ``decode_changes`` keeps the steps per
contract and replays them on the next DataFrame with the same columns, reusing the Column
expressions (Spark resolves them again against the new DataFrame).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Literal

from pyspark.sql import Column, DataFrame

StepKind = Literal["select", "where"]


@dataclass(frozen=True)
class Step:
    """One recorded DataFrame operation."""

    kind: StepKind
    args: tuple[Column | str, ...]

    def apply(self, df: DataFrame) -> DataFrame:
        if self.kind == "select":
            return df.select(*self.args)
        (condition,) = self.args
        return df.where(condition)


@dataclass(frozen=True)
class Frame:
    """A DataFrame and the steps that made it from the input DataFrame."""

    df: DataFrame
    steps: tuple[Step, ...] = ()

    @property
    def columns(self) -> list[str]:
        return self.df.columns

    def select(self, *cols: Column | str) -> Frame:
        return self._then(Step("select", cols))

    def where(self, condition: Column) -> Frame:
        return self._then(Step("where", (condition,)))

    def _then(self, step: Step) -> Frame:
        return Frame(step.apply(self.df), (*self.steps, step))


def replay(steps: tuple[Step, ...], df: DataFrame) -> DataFrame:
    """The recorded steps applied to another DataFrame of the same columns."""
    for step in steps:
        df = step.apply(df)
    return df


class StepCache:
    """The recorded steps of recent decodes, least recently used dropped first."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._entries: OrderedDict[Hashable, tuple[Step, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> tuple[Step, ...] | None:
        with self._lock:
            steps = self._entries.get(key)
            if steps is not None:
                self._entries.move_to_end(key)
            return steps

    def put(self, key: Hashable, steps: tuple[Step, ...]) -> None:
        with self._lock:
            self._entries[key] = steps
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
