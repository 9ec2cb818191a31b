"""How a review spends its time budget on the warm times: samples a round (pure).

``jaxbench review`` measures the first calls before the warm times, so by
then it knows what a first execution of each workload costs
(``track_first_execute_seconds``): at least what a warm call costs, so an
upper bound of one asv sample (``number`` calls back to back). Where even
that bound lets the first look's batches of rounds keep the review's samples
a round (``compare --paired``'s N) within what is left of the budget, they
are kept; otherwise a probe round measures what a sample and a round really
cost (:func:`jaxbench.jobs.ab.time_side_by_side`'s ``size``) and the samples
a round are those that fit, never more than the review's default and never
fewer than :data:`LEAST_PER_ROUND`. A suite of microsecond calls keeps the
default; a suite of millisecond samplers gets fewer samples. The rounds
themselves stop at the budget.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["LEAST_PER_ROUND", "SAMPLE_TIME", "batches", "per_round_within", "sample_seconds"]

#: The fewest samples a side a round: a round's estimate is their median log ratio.
LEAST_PER_ROUND = 5
#: asv's ``sample_time``: what one sample of a benchmark with ``number = 0`` lasts.
SAMPLE_TIME = 0.01


def sample_seconds(items: Iterable[tuple[int, float | None]]) -> float:
    """What one sample of every item costs a side: ``(number, seconds a call)`` each.

    ``number`` 0 is asv's calibrated number (a sample lasts :data:`SAMPLE_TIME`);
    a call of unknown cost counts as nothing.
    """
    total = 0.0
    for number, call in items:
        if number <= 0:
            total += SAMPLE_TIME
        elif call is not None and math.isfinite(call) and call > 0:
            total += number * call
    return total


def batches(rounds: int, parallel: int) -> int:
    """Batches of ``rounds`` rounds: the first alone, then ``parallel`` at a time."""
    return 1 + math.ceil(max(0, rounds - 1) / max(1, parallel))


def per_round_within(
    seconds: float, per_sample: float, *, batches: int, most: int, rest: float | None = None
) -> int:
    """Samples a side a round so that ``batches`` batches of rounds fit in ``seconds``.

    Each batch costs ``rest`` (starting the processes, preparing the workloads)
    and its samples, both sides of a round taking turns; ``rest`` unknown
    (None): half of the time is kept for it. Between :data:`LEAST_PER_ROUND`
    and ``most``."""
    if per_sample <= 0:
        return most
    each = seconds / max(1, batches)
    sampling = each / 2 if rest is None else each - rest
    fits = math.floor(max(0.0, sampling) / (2 * per_sample))
    return max(min(LEAST_PER_ROUND, most), min(most, fits))
