"""What a scan of a history finds: each step and how far its values back it.

The result types of :mod:`jaxbench.analyse.detect` (which fits the steps) and
:mod:`jaxbench.analyse.evidence` (which judges them), kept apart from both so
that neither imports the other back.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from jaxbench.kinds import Kind
from jaxbench.store.results import SeriesKey

__all__ = ["Evidence", "Regression"]


class Evidence(Enum):
    """How far the values back a step (:mod:`jaxbench.analyse.evidence`)."""

    #: asv's step fit alone (``find_regressions``, asv publish's semantics)
    ASV = "asv"
    #: a deterministic figure changed (XLA work): any lasting change counts
    EXACT = "exact"
    #: the values either side differ beyond their spread (Holm-adjusted t-test)
    CONFIRMED = "confirmed"
    #: within the spread of the values either side
    NOISE = "within noise"
    #: too few commits on a side to tell it from noise
    UNTESTED = "not tested"
    #: a memory step smaller than the floor
    BELOW_FLOOR = "below floor"

    @property
    def listed(self) -> bool:
        """Whether a step with this evidence is listed as a regression."""
        return self in (Evidence.ASV, Evidence.EXACT, Evidence.CONFIRMED)


@dataclass(frozen=True)
class Regression:
    """A step up that is still present at the end of a series."""

    key: SeriesKey
    kind: Kind
    good_commit: str | None
    bad_commit: str
    date: int
    before: float
    after: float
    ratio: float
    unit: str
    fixed_commit: str | None = None
    #: asv's "best value after the step" (its regressions page's "after")
    best_after: float | None = None
    #: the machine fingerprint of the fitted segment (None: unknown)
    fingerprint: str | None = None
    #: how far the values back the step (ASV: not judged, asv's semantics)
    evidence: Evidence = Evidence.ASV
    #: values (commits) of the fitted levels before and after the step (0: not counted)
    n_before: int = 0
    n_after: int = 0
    #: the step test's Holm-adjusted p-value (None: not tested)
    p_value: float | None = None

    @property
    def still_present(self) -> bool:
        """True unless a later commit brought the series back down."""
        return self.fixed_commit is None
