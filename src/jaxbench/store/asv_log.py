"""The error of each failed benchmark, from the output of ``asv run --show-stderr``.

asv's result files keep a failed benchmark as a ``null`` result and nothing
else: ``Results`` holds ``stderr`` and ``errcode`` in memory only ("stderr
and errcode are not saved to files", ``asv/results.py``). What is left of
the error is what ``asv run --show-stderr`` printed, e.g.::

    [ 0.00%] · For project commit 80399b84 <main>:
    [ 0.00%] ·· Benchmarking virtualenv-py3.11
    [25.00%] ··· bench.Suite.time_step                               failed
    [25.00%] ···· For parameters: 1
                  Traceback (most recent call last):
                    File "benchmarks/bench.py", line 9, in time_step
                      raise RuntimeError("Array has been deleted")
                  RuntimeError: Array has been deleted
                  asv: benchmark failed (exit status 1)

:func:`read_asv_log` keeps, per commit (asv prints the first 8 characters),
environment, benchmark and parameter combination, the last line of that
error: the exception line of the last traceback (``RuntimeError: Array has
been deleted``), else the last line that says something (``asv: benchmark
timed out``, ``asv: benchmark failed (exit status -11)``). Lines that are not
asv's progress output are passed over, so a ``tee`` of a whole CI step works.
asv cuts a long benchmark name to its end (``...oads.Figures.track_x``); such
a name answers for the one benchmark of that run whose name ends so.

Where asv could not build or install the project in an environment, it runs no
benchmark there and writes each one as failed (``null``); its output says why
once, for the environment::

    [25.00%] · For proj commit 92ff49f1 <main~1>:
    [25.00%] ·· Building for virtualenv-py3.11
    [25.00%] ··· Error running /.../bin/python -c ... (exit status 1)
                 STDOUT -------->
                 STDERR -------->
                 error: Microsoft Visual C++ 14.0 or greater is required
    [25.00%] ·· Skipping virtualenv-py3.11
    [31.25%] ··· bench.time_a skipped

:meth:`AsvLog.build_error` answers, per commit and environment, the last
line of that error (of its ``STDERR`` part, else of its ``STDOUT`` part,
else the ``Error running ...`` line itself); an environment asv skipped with
no error printed answers ``""``. With several environments built together,
the errors are given to the environments skipped in the order they were printed.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jaxbench.errors import UsageError
from jaxbench.store.results import SeriesKey

__all__ = [
    "MAX_ERROR_CHARS",
    "TRACEBACK",
    "AsvLine",
    "AsvLog",
    "SuiteFailure",
    "asv_line",
    "build_error_line",
    "cut_line",
    "error_line",
    "log_files",
    "parse_asv_log",
    "read_asv_log",
    "read_suite_failure",
    "suite_failure",
]

#: An error line longer than this is cut (with "...").
MAX_ERROR_CHARS = 240

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: asv's own line: its progress (``[16.67%]``, not on its first lines), its bullet, its text
_BULLET = re.compile(r"^(?:(\[\s*\d+(?:\.\d+)?%\]) )?(·+) ?(.*)$")
_PREFIX = re.compile(r"^\[\s*\d+(?:\.\d+)?%\] (·+) ?")
_COMMIT = re.compile(r"^For .* commit ([0-9a-f]{7,40})\b")
_BENCHMARKING = re.compile(r"^Benchmarking (\S+)")
#: ``name   status`` as asv's add_padded prints a result (names always hold a dot)
#: (asv cuts a long name to its end, behind "...")
_RESULT = re.compile(r"^((?:\.\.\.)?[\w]*(?:\.[\w]+)+)\s+(\S.*)$")
_CUT = "..."
_FAILED = re.compile(r"^(?:\d+/\d+ )?failed$")
_EXIT = re.compile(r"^asv: benchmark failed \(exit status -?\d+\)$")
_TABLE = re.compile(r"^[=\-\s]+$")
#: the line that opens a Python traceback
TRACEBACK = "Traceback (most recent call last):"
_PARAMS = "For parameters: "
_ERROR_RUNNING = "Error running "
_SKIPPING = re.compile(r"^Skipping (\S+)$")
_STREAM = re.compile(r"^(STDOUT|STDERR) -+>$")


@dataclass(frozen=True)
class AsvLog:
    """Error lines by (commit prefix, environment, benchmark), then by parameters.

    The parameter key is asv's ``', '.join(params)``; None holds the error of a
    benchmark without parameters (or one whose output named none).
    """

    errors: dict[tuple[str, str, str], dict[str | None, str]] = field(default_factory=dict)
    sources: tuple[Path, ...] = ()
    #: (commit prefix, environment) -> the last line of the error of a build or
    #: install that failed there ("": asv skipped the environment, no error printed)
    build_errors: dict[tuple[str, str], str] = field(default_factory=dict)
    #: (commit prefix, environment) -> (name's end, errors) of the names asv cut
    _cut: dict[tuple[str, str], list[tuple[str, dict[str | None, str]]]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        cut: dict[tuple[str, str], list[tuple[str, dict[str | None, str]]]] = {}
        for (short, env, bench), found in self.errors.items():
            if bench.startswith(_CUT):
                cut.setdefault((short, env), []).append((bench[len(_CUT) :], found))
        object.__setattr__(self, "_cut", cut)

    def error(self, key: SeriesKey, commit: str) -> str | None:
        """The last line of ``key``'s error at ``commit``, or None when the log has none."""
        by_params = self.errors.get((commit[:8], key.env_name, key.benchmark))
        if by_params is None:  # a long name that asv cut to its end: one that fits, alone
            cut = [
                found
                for end, found in self._cut.get((commit[:8], key.env_name), ())
                if key.benchmark.endswith(end)
            ]
            if len(cut) != 1:
                return None
            by_params = cut[0]
        found = by_params.get(", ".join(key.params)) if key.params else None
        return found if found is not None else by_params.get(None)

    def build_error(self, env_name: str, commit: str) -> str | None:
        """Why asv built or installed nothing in ``env_name`` at ``commit`` (None: the log
        does not say it failed; "": it skipped the environment and printed no error)."""
        return self.build_errors.get((commit[:8], env_name))

    @property
    def count(self) -> int:
        """Error lines held (benchmarks' and builds')."""
        return sum(len(v) for v in self.errors.values()) + len(self.build_errors)


@dataclass(frozen=True)
class AsvLine:
    """One line of asv's output, read as asv prints it."""

    #: the dots of asv's bullet: 1 a step or a commit, 2 an environment's build or
    #: benchmarks, 3 a benchmark, 4 its details; 0 for a line asv did not bullet (a
    #: command's output, a row of a result table, a traceback)
    depth: int
    #: the line without its colours, asv's progress and its bullet
    text: str
    #: asv's progress, ``[16.67%]`` ("" where the line has none)
    progress: str = ""
    #: a benchmark's result line (depth 3): its name, as asv printed it (maybe cut to
    #: its end, behind "..."), and its status ("ok", "failed", "1/2 failed", "skipped",
    #: or the value of a benchmark without parameters)
    benchmark: str | None = None
    status: str = ""

    @property
    def failed(self) -> bool:
        """A result line of a benchmark that failed (at some of its parameters or all)."""
        return self.benchmark is not None and _FAILED.match(self.status) is not None

    @property
    def skipped(self) -> bool:
        """A result line of a benchmark asv skipped (its environment did not build)."""
        return self.benchmark is not None and self.status.startswith("skipped")


def asv_line(raw: str) -> AsvLine:
    """One line of ``asv run``'s output (its newline, colours and padding cut)."""
    line = _ANSI.sub("", raw.rstrip("\n").rstrip("\r"))
    match = _BULLET.match(line)
    if match is None:
        return AsvLine(0, line.rstrip())
    depth, text = len(match.group(2)), match.group(3).rstrip()
    result = _RESULT.match(text) if depth == 3 else None
    if result is None:
        return AsvLine(depth, text, match.group(1) or "")
    return AsvLine(depth, text, match.group(1) or "", result.group(1), result.group(2).strip())


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def cut_line(text: str) -> str:
    """``text``, cut to :data:`MAX_ERROR_CHARS` characters (ending "...")."""
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."


def error_line(lines: Sequence[str]) -> str | None:
    """The last line of one error: the exception line of its last traceback, else
    the last line that says something."""
    starts = [i for i, line in enumerate(lines) if line.strip() == TRACEBACK]
    if starts:
        base = _indent(lines[starts[-1]])
        for line in lines[starts[-1] + 1 :]:
            if line.strip() and _indent(line) <= base:
                return cut_line(line.strip())
    said = [line.strip() for line in lines if line.strip() and not _TABLE.match(line)]
    telling = [s for s in said if not _EXIT.match(s) and s != "failed"]
    if telling:
        return cut_line(telling[-1])
    return cut_line(said[-1]) if said else None


def build_error_line(lines: Sequence[str]) -> str:
    """The last line of a failed build or install command's output as asv prints it
    (``Error running CMD (exit status N)``, then ``STDOUT -------->`` and
    ``STDERR -------->`` parts): of its standard error, else of its output, else
    the ``Error running`` line."""
    parts: dict[str, list[str]] = {"": []}
    current = parts[""]
    for line in lines:
        stream = _STREAM.match(line.strip())
        if stream is not None:
            current = parts.setdefault(stream.group(1), [])
            continue
        current.append(line)
    for name in ("STDERR", "STDOUT"):
        found = error_line(parts.get(name, []))
        if found is not None:
            return found
    said = [line.strip() for line in parts[""] if line.strip()]
    return cut_line(said[0]) if said else ""


def _errors_of(text: Sequence[str]) -> dict[str | None, str]:
    """Per parameter combination (``For parameters: ...`` blocks), or one for all."""
    blocks: dict[str | None, list[str]] = {}
    current: list[str] | None = None
    for line in text:
        if line.strip().startswith(_PARAMS):
            current = blocks.setdefault(line.strip()[len(_PARAMS) :], [])
            current.clear()  # the details repeat the stderr block: keep one copy
            continue
        if current is not None:
            current.append(line)
    if not blocks:
        blocks[None] = list(text)
    out: dict[str | None, str] = {}
    for params, lines in blocks.items():
        found = error_line(lines)
        if found is not None:
            out[params] = found
    return out


def parse_asv_log(lines: Iterable[str], source: Path | None = None) -> AsvLog:
    """The errors in the output of ``asv run --show-stderr`` (see module doc)."""
    errors: dict[tuple[str, str, str], dict[str | None, str]] = {}
    build_errors: dict[tuple[str, str], str] = {}
    commit = env = ""
    bench: str | None = None
    body: list[str] = []
    #: the output of a failed build or install command, while it is being read
    build: list[str] | None = None
    #: the errors of this commit's builds not yet given to a skipped environment
    pending: list[str] = []
    column = 0

    def close() -> None:
        nonlocal build
        if bench is not None and commit and env:
            found = _errors_of(body)
            if found:
                errors.setdefault((commit, env, bench), {}).update(found)
        if build is not None:
            pending.append(build_error_line(build))
            build = None

    for raw in lines:
        line = _ANSI.sub("", raw.rstrip("\n").rstrip("\r"))
        match = _PREFIX.match(line)
        if match is None:
            kept = line[column:] if not line[:column].strip() else line.lstrip()
            if bench is not None:
                body.append(kept)
            elif build is not None:
                build.append(kept)
            continue
        column = match.end()
        depth, text = len(match.group(1)), line[column:].rstrip()
        if depth <= 2:
            close()
            bench, body = None, []
            if (found := _COMMIT.match(text)) is not None:
                commit, env = found.group(1)[:8], ""
                pending.clear()
            elif (found := _BENCHMARKING.match(text)) is not None:
                env = found.group(1)
            elif (found := _SKIPPING.match(text)) is not None and commit:
                env = found.group(1)
                build_errors[(commit, env)] = pending.pop(0) if pending else ""
            elif text.startswith(_ERROR_RUNNING) and commit:
                build = [text]
            continue
        result = _RESULT.match(text) if depth == 3 else None
        if result is not None:
            close()
            failed = _FAILED.match(result.group(2).strip()) is not None
            bench, body = (result.group(1), []) if failed else (None, [])
            continue
        if bench is not None:
            body.append(text)
        elif text.startswith(_ERROR_RUNNING) and commit:
            close()
            build = [text]
    close()
    return AsvLog(errors, (source,) if source is not None else (), build_errors)


def log_files(paths: Sequence[Path]) -> list[Path]:
    """``paths`` with each directory replaced by its ``*.log`` files, oldest name first
    (the main job keeps one ``asv-run-<UTC time>.log`` per run there)."""
    found: list[Path] = []
    for path in paths:
        found.extend(sorted(path.glob("*.log")) if path.is_dir() else [path])
    return found


def read_asv_log(paths: Sequence[Path]) -> AsvLog:
    """The errors of every log in ``paths`` (a directory: its ``*.log`` files; a later
    log wins for the same run)."""
    paths = log_files(paths)
    merged: dict[tuple[str, str, str], dict[str | None, str]] = {}
    builds: dict[tuple[str, str], str] = {}
    for path in paths:
        try:
            with path.open(encoding="utf-8", errors="replace") as handle:
                log = parse_asv_log(handle, path)
        except OSError as exc:
            raise UsageError(
                f"--asv-log {path}: cannot read it ({exc.strerror or exc}); pass the file "
                "that holds the output of 'asv run --show-stderr'"
            ) from None
        for ident, by_params in log.errors.items():
            merged.setdefault(ident, {}).update(by_params)
        builds.update(log.build_errors)
    return AsvLog(merged, tuple(paths), builds)


#: asv's line when ``asv run`` could not build the project or import the suite.
_SUITE_FAILED = "Failed to build the project and import the benchmark suite."
_DISCOVERING = "Discovering benchmarks"
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')
_LIBRARY = re.compile(r"(site-packages|dist-packages|^<|/lib/python\d)")
_DISCOVER_COMMAND = "benchmark.py discover"


@dataclass(frozen=True)
class SuiteFailure:
    """Why ``asv run`` measured nothing: the project did not build, or the suite did
    not import, when asv discovered the benchmarks."""

    #: "build" or "import"
    stage: str
    #: one line: ``benchmarks/bad.py, line 3: SyntaxError: invalid syntax``
    cause: str

    def __str__(self) -> str:
        what = "import the benchmark suite" if self.stage == "import" else "build the project"
        return f"asv could not {what}: {self.cause}"


def suite_failure(lines: Iterable[str], root: Path | None = None) -> SuiteFailure | None:
    """Why ``asv run`` could not import the benchmark suite (or build the project to
    discover it), from its output; None when it did.

    The cause is one line: the file and line of the suite where a traceback
    names one (paths under ``root`` relative to it), and the error line.
    """
    #: (text, whether asv said it: a bullet line, not a command's output)
    block: list[tuple[str, bool]] | None = None
    failed: list[tuple[str, bool]] | None = None
    for raw in lines:
        line = _ANSI.sub("", raw.rstrip("\n").rstrip("\r"))
        match = _BULLET.match(line)
        if match is not None and len(match.group(2)) == 1:
            block = [] if match.group(3).startswith(_DISCOVERING) else None
            continue
        if block is None:
            continue
        if match is not None and match.group(3).strip() == _SUITE_FAILED:
            failed = block
            continue
        block.append((match.group(3), True) if match is not None else (line, False))
    if failed is None:
        return None
    stage = "import" if any(_DISCOVER_COMMAND in line for line, _ in failed) else "build"
    return SuiteFailure(stage, _failure_cause(failed, root))


#: asv's own last words that name a cause and its fix (``Last error: ...``).
_KNOWN_CAUSES = (
    (
        re.compile(r"Found multiple wheels in .* Cannot decide correct one"),
        "the build made several wheels (asv's default build_command builds the "
        "dependencies' too) and asv cannot tell which to install; give asv.conf.json a "
        "build_command that builds the project's alone: \"python -m pip wheel --no-deps "
        '-w {build_cache_dir} {build_dir}" (as jaxbench init writes it)',
    ),
)
_LAST_ERROR = "Last error:"
#: asv's progress lines in a failed discovery: never its cause
_PROGRESS = re.compile(r"^(?:Uninstalling from |Building |Installing |Failed: trying different)")


def _failure_cause(lines: Sequence[tuple[str, bool]], root: Path | None) -> str:
    frames = [(m.group(1), m.group(2)) for line, _ in lines if (m := _FRAME.match(line))]
    own = [(path, number) for path, number in frames if not _LIBRARY.search(path)]
    last = [line[len(_LAST_ERROR) :].strip() for line, _ in lines if line.startswith(_LAST_ERROR)]
    for pattern, cause in _KNOWN_CAUSES:
        if last and pattern.search(last[-1]):
            return cause
    # a command's own output first; asv's "Last error" where the commands said nothing
    error = error_line([line for line, asv_said in lines if not asv_said])
    if error is None and last:
        error = cut_line(last[-1])
    if error is None:  # asv's own lines that are not its progress (e.g. "Error running ...")
        error = error_line(
            [
                line
                for line, _ in lines
                if not line.startswith(_LAST_ERROR) and not _PROGRESS.match(line)
            ]
        )
    if own:
        path, number = own[-1]
        shown = Path(path)
        if root is not None:
            with contextlib.suppress(ValueError):
                shown = shown.resolve().relative_to(root.resolve())
        return f"{shown}, line {number}: {error or 'failed'}"
    return error or "asv printed no error text"


#: asv's last line when its ``-b`` leaves no benchmark of the suite to run (exit 1).
_NOTHING_SELECTED = "No benchmarks selected"


def selected_nothing(path: Path) -> bool:
    """asv's output at ``path`` ends with "No benchmarks selected" (False when unreadable)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            said = [line.strip() for line in handle if line.strip()]
    except OSError:
        return False
    match = _BULLET.match(_ANSI.sub("", said[-1])) if said else None
    return match is not None and match.group(3).strip() == _NOTHING_SELECTED


def read_suite_failure(path: Path, root: Path | None = None) -> SuiteFailure | None:
    """:func:`suite_failure` of the log at ``path`` (UsageError when it cannot be read)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return suite_failure(handle, root)
    except OSError as exc:
        raise UsageError(
            f"--asv-log {path}: cannot read it ({exc.strerror or exc}); pass the file "
            "that holds the output of 'asv run --show-stderr'"
        ) from None
