"""Errors that reach users.

Exception tree::

    JaxbenchError          one line: what is wrong and how to fix it (CLI exit 2)
     +-- UsageError        a bad option or argument
     +-- ResultsError      asv results that cannot be read or used
     +-- WorkloadError     a workload that cannot be measured
          +-- ReferenceMismatch   a result outside the NumPy reference's tolerance
          +-- TooFewDevices       more devices needed than this process has (a skip)
          +-- ForkAfterBackend    forked after jax's backend started (it would hang)

The CLI prints ``jaxbench: error: <message>`` and exits 2 for any of them;
no traceback is shown.
"""

from __future__ import annotations

__all__ = [
    "ForkAfterBackend",
    "JaxbenchError",
    "ReferenceMismatch",
    "ResultsError",
    "TooFewDevices",
    "UsageError",
    "WorkloadError",
]


class JaxbenchError(Exception):
    """A problem the user can fix; the message names the problem and the fix."""


class UsageError(JaxbenchError):
    """A bad command-line option or argument."""


class ResultsError(JaxbenchError):
    """asv results that cannot be read or used."""


class WorkloadError(JaxbenchError):
    """A workload that cannot be measured (bad output, exception, recompilation)."""


class ReferenceMismatch(WorkloadError):
    """A result that does not match the NumPy reference within tolerance."""


class TooFewDevices(WorkloadError):
    """A workload that needs more devices than this process has (skipped, not failed)."""


class ForkAfterBackend(WorkloadError):
    """A process forked after jax's backend started: its first jax call would hang."""
