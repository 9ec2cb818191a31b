"""Test doubles for the timing tests: a clock to inject and a leaf that logs waits."""

from __future__ import annotations


class FakeClock:
    """Readings 0, 1, 3, 6, 10, ...: reading k is k seconds after reading k-1.

    With a ``log``, each read appends ``"clock"`` to it.
    """

    def __init__(self, log: list[str] | None = None) -> None:
        self.reads = 0
        self.log = log

    def __call__(self) -> float:
        value = self.reads * (self.reads + 1) / 2
        self.reads += 1
        if self.log is not None:
            self.log.append("clock")
        return float(value)


class RecordingLeaf:
    """A pytree leaf that logs when jax.block_until_ready waits for it."""

    def __init__(self, log: list[str], name: str) -> None:
        self.log = log
        self.name = name

    def block_until_ready(self) -> RecordingLeaf:
        self.log.append(f"ready {self.name}")
        return self
