"""When fresh-process rounds may stop early without adding a false alarm (pure).

``jaxbench first-call`` measures base and head in rounds, one fresh process a
side a round, and ``compare`` tests each figure (first call and its stages,
what a workload adds to memory) with a paired test over all the rounds it
finds, held to the review's family-wise rate by Holm's adjustment. The
rounds may stop before their maximum once every figure is *settled*: its
paired test, read now, is not suggestive (p-value at or above ``below``) or
its estimate lies within a relaxed gate (the square root of the figure's
factor, half its absolute part). :func:`open_rows` names the figures that
are not settled; the review keeps measuring while there are any.

Why stopping on this rule adds no false alarm, whatever it does to the
p-values: the rounds stop for every figure together, and only when none is
open. A figure is flagged by ``compare`` only when its Holm-adjusted p-value
(at least its own) is below ``alpha`` and its estimate is beyond the full
gate; with ``below >= alpha`` a settled figure meets neither, so a review
that stopped early flags no figure of this step, and a review that ran every
round is the fixed test. So the chance of a false alarm is at most the
fixed test's (``tests/test_sequential.py`` simulates it). The price is
power: a changed figure whose first rounds happen to look settled stops
with them; the relaxed gate and ``below`` keep that rare for a change the
full rounds would have called. A figure that could not be paired (a side
failed or skipped every round) is not open: more rounds will not test it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from jaxbench.analyse.compare import Settings
from jaxbench.analyse.floors import floor_of
from jaxbench.analyse.stats import (
    SECOND_LOOK_BELOW,
    Verdict,
    compare_paired,
    compare_paired_amounts,
)
from jaxbench.kinds import COMPILE_TRACKS, WORKLOAD_MEMORY_TRACKS, method_of

__all__ = ["PairedFigure", "open_rows"]


@dataclass(frozen=True)
class PairedFigure:
    """One figure's values so far, pair ``i`` of base and head measured side by side."""

    benchmark: str
    params: tuple[str, ...]
    base: tuple[float, ...]
    head: tuple[float, ...]

    @property
    def label(self) -> str:
        return f"{self.benchmark}({', '.join(self.params)})" if self.params else self.benchmark


def _open(figure: PairedFigure, settings: Settings, below: float) -> bool:
    method = method_of(figure.benchmark)
    if method in COMPILE_TRACKS:
        found = compare_paired(
            figure.base,
            figure.head,
            round_size=1,
            factor=math.sqrt(settings.first_call_factor),
            alpha=below,
        )
    elif method in WORKLOAD_MEMORY_TRACKS:
        floor = floor_of(figure.benchmark)
        absolute = floor.history_absolute if floor is not None else 0.0
        found = compare_paired_amounts(
            figure.base,
            figure.head,
            factor=math.sqrt(settings.memory_factor),
            absolute=absolute / 2,
            alpha=below,
        )
    else:
        return False
    if found is None:
        return False
    # Too few pairs to test yet (INCONCLUSIVE): open, more rounds will tell.
    return found.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT, Verdict.INCONCLUSIVE)


def open_rows(
    figures: Iterable[PairedFigure],
    settings: Settings,
    *,
    below: float = SECOND_LOOK_BELOW,
) -> list[str]:
    """The labels of the figures not yet settled (empty: the rounds may stop).

    ``below`` must be at least ``settings.alpha``, or a stop could hide a
    figure that the full test would flag at that step.
    """
    if below < settings.alpha:
        raise ValueError(f"below ({below:g}) must be at least alpha ({settings.alpha:g})")
    return [f.label for f in figures if f.base and _open(f, settings, below)]
