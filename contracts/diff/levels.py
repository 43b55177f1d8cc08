"""The order of compatibility levels: which level guarantees more, defined once.

A level guarantees readers something in two directions: backward (new schemas read old data)
and forward (old schemas read new data), each against the latest version (1) or every version
(2), or not at all (0). One level is lower than another when it gives up a guarantee the other
made; :func:`judging_level` is the level a change of level is judged at: every guarantee of
the baseline (the registry keeps applying it until the level is changed) and of the new level
(what the registry applies once the new level is set).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from contracts.contract import CompatibilityLevel

__all__ = ["GUARANTEES", "judging_level", "lowered", "raised"]

_L = CompatibilityLevel

#: level → (backward depth, forward depth): 0 none, 1 the latest version, 2 every version
GUARANTEES: Final[Mapping[CompatibilityLevel, tuple[int, int]]] = {
    _L.NONE: (0, 0),
    _L.BACKWARD: (1, 0),
    _L.BACKWARD_TRANSITIVE: (2, 0),
    _L.FORWARD: (0, 1),
    _L.FORWARD_TRANSITIVE: (0, 2),
    _L.FULL: (1, 1),
    _L.FULL_TRANSITIVE: (2, 2),
}


def _covers(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] >= b[0] and a[1] >= b[1]


def lowered(old: CompatibilityLevel, new: CompatibilityLevel) -> bool:
    """Whether ``new`` gives up a guarantee ``old`` made (BACKWARD → NONE, FULL → BACKWARD,
    BACKWARD_TRANSITIVE → BACKWARD, BACKWARD → FORWARD)."""
    return not _covers(GUARANTEES[new], GUARANTEES[old])


def raised(old: CompatibilityLevel, new: CompatibilityLevel) -> bool:
    """Whether ``new`` keeps every guarantee of ``old`` and adds one."""
    return old != new and _covers(GUARANTEES[new], GUARANTEES[old])


def judging_level(old: CompatibilityLevel | None, new: CompatibilityLevel) -> CompatibilityLevel:
    """The lowest level guaranteeing all that ``old`` (the baseline's, None: unknown) and
    ``new`` do: ``old`` for a lowering, ``new`` for a raise."""
    if old is None:
        return new
    want = tuple(max(a, b) for a, b in zip(GUARANTEES[old], GUARANTEES[new], strict=True))
    fitting = [lvl for lvl, g in GUARANTEES.items() if _covers(g, (want[0], want[1]))]
    return min(fitting, key=lambda lvl: sum(GUARANTEES[lvl]))
