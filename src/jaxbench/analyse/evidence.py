"""Whether a step that asv's fit finds in a history is more than noise.

asv's step fit (:mod:`jaxbench.analyse.detect`) finds steps in every series. A
history holds one value per commit, each from its own process: first-call
and compile times, process memory, and unpaired warm times vary from process
to process far more than within one, and asv's fit also finds steps in that
noise. On a fresh clone whose first ``make bench`` measured 3 commits, it
listed 72 of 590 series as regressed with no code change (README, "The main
job on a fresh clone"). jaxbench lists a step only when the values confirm it
(:class:`~jaxbench.analyse.detect.Evidence`):

- deterministic figures (XLA work, and whether the answer was checked:
  :func:`jaxbench.kinds.exact_figure`) count at once: ``EXACT``;
- a step of a family whose values drift between ``asv run`` invocations
  (process peak memory: :attr:`jaxbench.analyse.floors.Floor.drifts`) is not
  listed unless it exceeds the family's measured floor, absolute and relative
  (``BELOW_FLOOR``; :mod:`jaxbench.analyse.floors`, the same floor ``compare``
  uses): it moves by up to 30 MiB or 1.13x between commits with identical code
  measured one after another, slowly enough that the step test below takes
  the drift for a step (docs/measured.md). A step of a workload's peak RSS
  (or device peak) smaller than 1 MiB is not listed either: it moves by
  pages and allocator arenas from process to process;
- every other step is tested with the values on either side of it, one per
  commit: the fitted level on each side widened over the neighbouring levels
  within the threshold of it. With fewer than :data:`MIN_SIDE` values on a
  side it cannot be told from noise (``UNTESTED``: counted apart, never
  listed as a regression). Otherwise a one-sided t test whose spread comes
  from the successive differences of the whole series, not from the fitted
  levels (the fit chose those by their values), with a Bonferroni factor for
  the positions the fit could have chosen
  (:func:`jaxbench.analyse.stats.step_p_value`), Holm-adjusted over every
  tested step of the scan and every series searched without one, must be
  below :data:`ALPHA` (``CONFIRMED``), else
  the step is within the series' own noise (``NOISE``).

No test on the values alone can tell a run of slow processes after a run of
fast ones from a step: ``bench/bench_step_evidence.py`` measures how often
that happens in noise that switches between two states.

A step at one of the newest commits of a history is therefore ``UNTESTED``
until :data:`MIN_SIDE` commits have been measured after it. The paired
history (``jaxbench pair-history``: each commit's warm times timed side by
side with its parent's) judges warm times at once, and the pull-request
review every kind, before the commit lands.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from jaxbench.analyse.findings import Evidence, Regression
from jaxbench.analyse.floors import history_floor
from jaxbench.analyse.stats import DEFAULT_ALPHA, holm_adjust, step_p_value
from jaxbench.kinds import exact_figure

__all__ = ["ALPHA", "MIN_SIDE", "below_floor", "judge"]

#: Fewest values (commits) on each side of a step for the test (3 let runs of
#: three slow processes through, measured with bench/bench_step_evidence.py).
MIN_SIDE = 4
#: Family-wise level of the tested steps of one scan (Holm).
ALPHA = DEFAULT_ALPHA


def below_floor(reg: Regression) -> bool:
    """Whether a step is within its family's floor (:func:`.floors.history_floor`)."""
    return history_floor(reg.key.benchmark, reg.before, reg.after)


def judge(
    candidates: Sequence[
        tuple[
            Regression,
            Sequence[float],
            Sequence[float],
            tuple[Sequence[float], Sequence[float]],
        ]
    ],
    *,
    alpha: float = ALPHA,
    family: int = 0,
) -> list[Regression]:
    """Each candidate step with its evidence, in the order given.

    A candidate is a fitted step, the values (one per commit, missing ones left
    out) before and after it (see ``detect._sides``), and the whole series cut
    at the step, whose successive differences give the spread.

    ``family``: how many series (segments) were searched for a step. A
    segment in which the fit proposed no step still counts in Holm's family
    (as a p-value of 1): the fit looked at it, and a fit that proposes only
    likely steps would otherwise escape the correction for the series it
    searched. The family is at least the number of tested steps.
    """
    judged: list[Regression] = []
    tested: list[int] = []
    raw: list[float] = []
    for reg, before, after, context in candidates:
        reg = dataclasses.replace(reg, n_before=len(before), n_after=len(after))
        if exact_figure(reg.key.benchmark):
            judged.append(dataclasses.replace(reg, evidence=Evidence.EXACT))
        elif below_floor(reg):
            judged.append(dataclasses.replace(reg, evidence=Evidence.BELOW_FLOOR))
        elif min(len(before), len(after)) < MIN_SIDE:
            judged.append(dataclasses.replace(reg, evidence=Evidence.UNTESTED))
        else:
            tested.append(len(judged))
            raw.append(step_p_value(before, after, context))
            judged.append(reg)
    padded = raw + [1.0] * max(0, family - len(raw))
    for index, p in zip(tested, holm_adjust(padded)[: len(raw)], strict=True):
        evidence = Evidence.CONFIRMED if p < alpha else Evidence.NOISE
        judged[index] = dataclasses.replace(judged[index], evidence=evidence, p_value=p)
    return judged
