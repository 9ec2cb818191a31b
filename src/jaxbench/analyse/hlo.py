"""Optimized HLO text: op histograms, normalisation and diffs (pure; no jax).

The measuring half stores ``Compiled.as_text()`` (see :mod:`jaxbench.store.hlo_store`);
this module reads that text without jax so the analysing half can count and
compare it.

Counting rules (``op_histogram``, ``counted_ops``, ``fusion_count``):

* every HLO instruction in every computation of the module is counted once by
  its opcode: the entry computation, fused computations and called
  computations (reductions, loop bodies) alike; so a fusion contributes its
  ``fusion`` instruction *and* the instructions inside it;
* ``counted_ops`` leaves out the bookkeeping opcodes in :data:`BOOKKEEPING_OPS`
  (``parameter``, ``constant``, ``tuple``, ``get-tuple-element``), which do no
  work;
* ``fusion_count`` is the number of ``fusion`` instructions.

For ``tanh(x @ w)`` compiled by jax 0.10.2 on the CPU that gives
``fusion`` 2, ``dot`` 1, ``tanh`` 1, ``parameter`` 5: 4 counted ops, 2 fusions.

Normalisation (``normalise``) removes what changes while the program does not:
the module name, the source-location tables (``FileNames`` ... ``StackFrames``),
``metadata={...}`` and ``frontend_attributes={...}``, long hexadecimal
addresses; and it renames every instruction ``%<opcode>.<n>`` and every
computation ``%<stem>.<n>`` (its name without numeric suffixes), numbered in
order of appearance. Shapes, dtypes, layouts, opcodes, operands and the
remaining attributes stay, so an extra transpose or a float64 shows.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from jaxbench.errors import UsageError

__all__ = [
    "BOOKKEEPING_OPS",
    "BenchmarkHloChange",
    "HloDiff",
    "HloDiffReport",
    "OpChange",
    "counted_ops",
    "diff_runs",
    "fusion_count",
    "hlo_diff",
    "normalise",
    "op_histogram",
]

#: Opcodes that move no data and do no arithmetic; left out of ``counted_ops``.
BOOKKEEPING_OPS = frozenset({"parameter", "constant", "tuple", "get-tuple-element"})

#: Attributes that carry source locations or frontend hints, not the program.
_DROPPED_ATTRIBUTES = ("metadata", "frontend_attributes")

#: Header sections of source-location tables (jax >= 0.10 prints them).
_LOCATION_SECTIONS = frozenset({"FileNames", "FunctionNames", "FileLocations", "StackFrames"})

_NAME = r"[A-Za-z_][\w.\-]*"
_INSTRUCTION = re.compile(rf"^\s*(?:ROOT\s+)?%({_NAME})\s*=\s*(.*)$")
_COMPUTATION = re.compile(rf"^\s*(?:ENTRY\s+)?%({_NAME})\s*\((.*)\)\s*->.*\{{\s*$")
_OPCODE = re.compile(r"\s*([a-z][a-z0-9\-_]*)\(")
_REFERENCE = re.compile(rf"%({_NAME})")
_HEADER_PARAM = re.compile(rf"(?<![\w.%\-])({_NAME}):")
_MODULE = re.compile(rf"^HloModule\s+{_NAME}")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{8,}")
_NUMERIC_SUFFIX = re.compile(r"(?:[._]\d+)+$")


@dataclass(frozen=True)
class OpChange:
    """How many instructions of one opcode the base and head programs have."""

    op: str
    base: int
    head: int


@dataclass(frozen=True)
class HloDiff:
    """What changed between two optimized HLO modules.

    ``op_changes`` lists only opcodes whose count changed, by name.
    ``diff_lines`` is a unified diff of the normalised texts, cut to
    ``max_lines``; ``omitted_lines`` says how many lines were cut.
    """

    identical: bool
    op_changes: tuple[OpChange, ...]
    base_fusions: int
    head_fusions: int
    base_ops: int
    head_ops: int
    diff_lines: tuple[str, ...]
    omitted_lines: int

    @property
    def histogram_change(self) -> dict[str, tuple[int, int]]:
        """Opcode -> (base count, head count), for the opcodes that changed."""
        return {c.op: (c.base, c.head) for c in self.op_changes}


def _skip_type(rest: str) -> str:
    """``rest`` after the result type of an instruction (``f32[2]{0}`` or ``(...)``)."""
    rest = rest.lstrip()
    if rest.startswith("("):
        depth = 0
        for i, char in enumerate(rest):
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    return rest[i + 1 :]
        return ""
    space = rest.find(" ")
    return "" if space < 0 else rest[space:]


def _instructions(hlo_text: str) -> list[tuple[str, str]]:
    """(name, opcode) of each instruction, in order of appearance."""
    found: list[tuple[str, str]] = []
    for line in hlo_text.splitlines():
        match = _INSTRUCTION.match(line)
        if match is None:
            continue
        opcode = _OPCODE.match(_skip_type(match.group(2)))
        if opcode is not None:
            found.append((match.group(1), opcode.group(1)))
    return found


def op_histogram(hlo_text: str) -> dict[str, int]:
    """Opcode -> number of instructions with it, over every computation."""
    return dict(sorted(Counter(op for _, op in _instructions(hlo_text)).items()))


def counted_ops(histogram: dict[str, int]) -> int:
    """Instructions in ``histogram`` other than :data:`BOOKKEEPING_OPS`."""
    return sum(n for op, n in histogram.items() if op not in BOOKKEEPING_OPS)


def fusion_count(histogram: dict[str, int]) -> int:
    """Number of ``fusion`` instructions in ``histogram``."""
    return histogram.get("fusion", 0)


def _drop_attribute(line: str, attribute: str) -> str:
    """``line`` without ``, attribute={...}`` (braces balanced, strings respected)."""
    pattern = re.compile(rf"(?<![\w\-]){re.escape(attribute)}=\{{")
    while True:
        found = pattern.search(line)
        if found is None:
            return line
        start = found.start()
        depth = 0
        in_string = False
        end = len(line)
        i = found.end() - 1
        while i < len(line):
            char = line[i]
            if in_string:
                if char == "\\":
                    i += 1
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    end = i + 1
                    break
            i += 1
        head = line[:start].rstrip()
        if head.endswith(","):
            head = head[:-1]
        tail = line[end:]
        line = head + tail if tail.startswith((",", ")")) or not tail else f"{head} {tail.lstrip()}"


def _without_location_tables(lines: list[str]) -> list[str]:
    kept: list[str] = []
    skipping = False
    for line in lines:
        if line.strip() in _LOCATION_SECTIONS:
            skipping = True
            continue
        if skipping and not line.strip():
            skipping = False
            continue
        if not skipping:
            kept.append(line)
    return kept


def _canonical_names(lines: list[str]) -> dict[str, str]:
    """Old name -> canonical name, numbered per opcode or stem in order of appearance."""
    counters: Counter[str] = Counter()
    names: dict[str, str] = {}
    for line in lines:
        computation = _COMPUTATION.match(line)
        if computation is not None:
            stem = _NUMERIC_SUFFIX.sub("", computation.group(1)) or "computation"
            names.setdefault(computation.group(1), f"{stem}.{counters[stem]}")
            counters[stem] += 1
            continue
        for name, opcode in _instructions(line):
            names.setdefault(name, f"{opcode}.{counters[opcode]}")
            counters[opcode] += 1
    return names


def _rename(line: str, names: dict[str, str]) -> str:
    def reference(match: re.Match[str]) -> str:
        return "%" + names.get(match.group(1), match.group(1))

    computation = _COMPUTATION.match(line)
    if computation is not None:
        params = computation.group(2)
        renamed = _HEADER_PARAM.sub(lambda m: names.get(m.group(1), m.group(1)) + ":", params)
        line = line[: computation.start(2)] + renamed + line[computation.end(2) :]
    return _REFERENCE.sub(reference, line)


def normalise(hlo_text: str) -> str:
    """``hlo_text`` with names, source locations and addresses made canonical.

    Two compiles of the same program give the same text; a change of
    opcodes, operands, shapes, dtypes or layouts gives a different one.
    """
    lines = _without_location_tables(hlo_text.splitlines())
    for attribute in _DROPPED_ATTRIBUTES:
        lines = [_drop_attribute(line, attribute) for line in lines]
    lines = [_ADDRESS.sub("0x?", _MODULE.sub("HloModule module", line)) for line in lines]
    names = _canonical_names(lines)
    out: list[str] = []
    for line in lines:
        line = _rename(line, names).rstrip()
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


def hlo_diff(base_text: str, head_text: str, *, context: int = 3, max_lines: int = 80) -> HloDiff:
    """Compare two optimized HLO modules: op counts, fusions and a short diff."""
    if context < 0 or max_lines < 1:
        raise ValueError("context must be >= 0 and max_lines >= 1")
    base_hist, head_hist = op_histogram(base_text), op_histogram(head_text)
    changes = tuple(
        OpChange(op, base_hist.get(op, 0), head_hist.get(op, 0))
        for op in sorted(base_hist.keys() | head_hist.keys())
        if base_hist.get(op, 0) != head_hist.get(op, 0)
    )
    base_norm, head_norm = normalise(base_text), normalise(head_text)
    lines = list(
        difflib.unified_diff(
            base_norm.splitlines(),
            head_norm.splitlines(),
            fromfile="base",
            tofile="head",
            n=context,
            lineterm="",
        )
    )
    return HloDiff(
        identical=base_norm == head_norm,
        op_changes=changes,
        base_fusions=fusion_count(base_hist),
        head_fusions=fusion_count(head_hist),
        base_ops=counted_ops(base_hist),
        head_ops=counted_ops(head_hist),
        diff_lines=tuple(lines[:max_lines]),
        omitted_lines=max(0, len(lines) - max_lines),
    )


# ---------------------------------------------------------------------------
# two commits, benchmark by benchmark


@dataclass(frozen=True)
class BenchmarkHloChange:
    """One benchmark's HLO at base and head; ``diff`` is None when one side is missing."""

    benchmark: str
    params: tuple[str, ...]
    diff: HloDiff | None
    in_base: bool
    in_head: bool

    @property
    def label(self) -> str:
        return f"{self.benchmark} [{', '.join(self.params)}]" if self.params else self.benchmark

    @property
    def changed(self) -> bool:
        return self.diff is None or not self.diff.identical


@dataclass(frozen=True)
class HloDiffReport:
    """Every benchmark with stored HLO at base or head, in name order."""

    base: str
    head: str
    machine: str
    env_name: str
    changes: tuple[BenchmarkHloChange, ...]


def diff_runs(
    base_texts: Mapping[tuple[str, tuple[str, ...]], str],
    head_texts: Mapping[tuple[str, tuple[str, ...]], str],
    *,
    base: str,
    head: str,
    machine: str,
    env_name: str,
    context: int = 3,
    max_lines: int = 80,
) -> HloDiffReport:
    """Every benchmark with HLO at ``base`` or ``head``, diffed where it has both."""
    if context < 0:
        raise UsageError(f"--context must be 0 or more, got {context}")
    changes = []
    for key in sorted(base_texts.keys() | head_texts.keys()):
        both = key in base_texts and key in head_texts
        diff = (
            hlo_diff(base_texts[key], head_texts[key], context=context, max_lines=max_lines)
            if both
            else None
        )
        changes.append(
            BenchmarkHloChange(key[0], key[1], diff, key in base_texts, key in head_texts)
        )
    return HloDiffReport(base, head, machine, env_name, tuple(changes))
