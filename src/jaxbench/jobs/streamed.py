"""A child command whose output is streamed line by line, stopped with us.

:func:`run_streamed` starts the command in its own process group (so that
asv's own children, its benchmark processes and pip, belong to it), hands
each output line to a callback, and returns the exit status. When the
caller is interrupted (Ctrl-C, the ``SIGTERM`` of a cancelled CI job, which
:mod:`jaxbench.cli` turns into an exception) or anything else goes wrong
while it runs, the whole group is sent ``SIGTERM``, then ``SIGKILL`` after
:data:`GRACE` seconds, and reaped, before the exception goes on: nothing
keeps running, and the caller's ``finally`` blocks (temporary configuration
files) run after the children are gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

__all__ = ["GRACE", "run_streamed"]

#: Seconds the group has to stop after SIGTERM before it is killed.
GRACE = 5.0


def _stop_group(proc: subprocess.Popen[str]) -> None:
    for sig, wait in ((signal.SIGTERM, GRACE), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_streamed(
    command: Sequence[str], *, cwd: Path, env: Mapping[str, str], line: Callable[[str], None]
) -> int:
    """Run ``command``, each line of its output (stdout and stderr) to ``line``; its status."""
    proc = subprocess.Popen(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        with proc.stdout:
            for text in proc.stdout:
                line(text)
        return proc.wait()
    except BaseException:
        _stop_group(proc)
        raise
