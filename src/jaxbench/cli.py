"""The ``jaxbench`` command line.

Each subcommand lives in ``jaxbench.commands.<name>`` and exposes ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``. Command modules are
imported only when needed and never import jax at module level, so
``jaxbench regressions`` does not pay for importing it.

Every :class:`~jaxbench.errors.JaxbenchError` becomes one line on stderr and
exit status 2; a bad option does the same. An interrupt (Ctrl-C, exit 130) or
a ``SIGTERM`` (a cancelled CI job, ``timeout``; exit 143) unwinds the command:
its temporary files (the copies of ``asv.conf.json`` beside it, staging
folders) are removed and its child processes stopped, as on an error.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from types import FrameType, ModuleType
from typing import NoReturn

from jaxbench import __version__
from jaxbench.errors import JaxbenchError

__all__ = ["COMMANDS", "INTERNAL", "main"]

#: Subcommand name -> module under ``jaxbench.commands``.
COMMANDS: dict[str, str] = {
    "init": "init",
    "report": "report",
    "review": "review",
    "compare": "compare",
    "ab": "ab",
    "first-call": "first_call",
    "regressions": "regressions",
    "hlo-diff": "hlo_diff",
    "publish": "publish",
    "machine": "machine",
    "pair-history": "pair_history",
    "bisect": "bisect",
    "upgrade": "upgrade",
    "check-run": "check_run",
    "progress": "progress",
    "asv-tee": "asv_tee",
}

#: Helpers that ``make bench`` and the workflows call, not commands for people:
#: callable like the others, left out of ``jaxbench --help``'s list.
INTERNAL = frozenset({"asv-tee", "check-run", "progress"})

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _load(name: str) -> ModuleType:
    return importlib.import_module(f"jaxbench.commands.{COMMANDS[name]}")


def _build_parser(argv: Sequence[str]) -> _Parser:
    parser = _Parser(
        prog="jaxbench",
        description="Benchmark-regression tracking for JAX code, built on asv.",
        epilog=(
            "environment: JAXBENCH_QUIET_LOCK=FILE on a machine that several jobs share: "
            "jaxbench holds FILE alone while it times two sides, other work holds it "
            "shared (flock -s FILE COMMAND); see the guide's Machines page"
        ),
    )
    parser.add_argument("--version", action="version", version=f"jaxbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    # Import only the module of the command asked for; list the others by name.
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name in COMMANDS:
        module = _load(name) if name == wanted or wanted not in COMMANDS else None
        text = module.HELP if module else f"see 'jaxbench {name} --help'"
        # argparse lists a subcommand in --help only when it is given a help text.
        sp = sub.add_parser(name) if name in INTERNAL else sub.add_parser(name, help=text)
        if module is not None:
            sp.description = module.HELP
            module.add_arguments(sp)
            sp.set_defaults(_run=module.run)
    return parser


class _Terminated(BaseException):
    """SIGTERM, raised where the command is, so that its ``finally`` blocks run."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """SIGTERM raises :class:`_Terminated` in the main thread while the command runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser(args_list)
    args = parser.parse_args(args_list)
    try:
        with _sigterm_unwinds():
            status: int = args._run(args)
    except JaxbenchError as exc:
        print(f"jaxbench: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("jaxbench: interrupted", file=sys.stderr)
        return 130
    except _Terminated:
        print("jaxbench: terminated", file=sys.stderr)
        return 143
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
