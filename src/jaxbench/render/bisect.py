"""``jaxbench bisect``'s answer as text and as its versioned JSON document (pure).

The text names first each commit found to start a step (its hash, its place
in the range, its subject) with the benchmarks that step there, each with
the paired ratio and interval of the narrowest pair around it; then the
benchmarks with no single step and why; then every step: the two commits,
what each benchmark said, the rounds and the time, and the total time.

JSON (``--format json``), version :data:`JSON_FORMAT`::

    {"format": 1, "good": H, "bad": H, "commits": [H, ...], "env_name": E,
     "event": null | {"number", "machine", "env_name", "good_commit", "bad_commit"},
     "single_step": bool, "culprits": [{"commit", "index", "subject", "benchmarks": [...]}],
     "findings": [...], "left_out": ["..."], "steps": [...], "seconds": S}

``commits`` is the range in first-parent order (``GOOD`` first); an
``index`` is a place in it. Each finding has ``benchmark``, ``params``,
``kind``, ``outcome`` (``single``: the step is at ``commit``; ``spread``:
``commit`` holds only part of the change, ``share`` of it, at most
``share_high``; ``no change``, ``undecided``, ``contradicted``), ``reason``,
``commit`` and ``index`` (null without one), ``ratio``, ``low``, ``high``
(the narrowest different pair around it, whose commits are ``pair``),
``base_value`` and ``head_value`` (exact figures). Each step has ``base``,
``head``, ``base_index``, ``head_index``, ``seconds``, ``rounds`` and its
``verdicts``: ``benchmark``, ``params``, ``call`` (``different``, ``same``,
``undecided``), ``ratio``, ``low``, ``high``, ``p_value`` (spent over the
looks), ``holm_p`` (over the step's benchmarks), ``rounds``, ``reason``,
``base_value``, ``head_value``.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jaxbench.analyse.bisect import Answer, Call, Finding, Judged, StepRecord
from jaxbench.kinds import Kind
from jaxbench.render.progress import format_duration
from jaxbench.render.units import format_ratio, format_value

if TYPE_CHECKING:
    from jaxbench.analyse.events import Event

__all__ = [
    "JSON_FORMAT",
    "bisect_command",
    "format_json",
    "format_text",
    "step_line",
]

#: Version of the ``--format json`` document.
JSON_FORMAT = 1
#: Verdicts shown one per line under a step; the "same" ones past these are counted.
SHOWN_SAME = 3


def bisect_command(event: Event, *, results: str | None = None, config: str | None = None) -> str:
    """The command that bisects ``event`` (its bad commit names it: stable as the history grows)."""
    parts = ["jaxbench", "bisect", "--event", event.bad_commit[:12]]
    parts += ["--machine", event.machine, "--env", event.env_name]
    if results is not None:
        parts += ["--results", results]
    if config is not None:
        parts += ["--config", config]
    return " ".join(shlex.quote(p) for p in parts)


def _unit(judged: Judged) -> str:
    kind = judged.target.kind
    if kind in (Kind.TIME, Kind.COMPILE):
        return "seconds"
    if kind is Kind.MEMORY or judged.target.benchmark.endswith("_bytes"):
        return "bytes"
    return ""


def _ratio(judged: Judged) -> str:
    """``1.21x [1.19x, 1.23x]``, or an exact figure's two values."""
    if judged.target.exact or (judged.base_value is not None or judged.head_value is not None):
        if judged.base_failed or judged.head_failed:
            return "passes -> fails" if judged.head_failed else "fails -> passes"
        unit = _unit(judged)
        values = (
            f"{format_value(judged.base_value, unit)} -> {format_value(judged.head_value, unit)}"
        )
        return f"{format_ratio(judged.ratio, exact=True)} ({values})" if judged.ratio else values
    text = format_ratio(judged.ratio)
    if judged.low is not None and judged.high is not None:
        text += f" [{format_ratio(judged.low)}, {format_ratio(judged.high)}]"
    return text or "-"


def _commit(commits: Sequence[str], index: int) -> str:
    return commits[index][:8]


def _pair(commits: Sequence[str], base: int, head: int) -> str:
    return f"{_commit(commits, base)}..{_commit(commits, head)} ({base}..{head})"


def step_line(number: int, step: StepRecord, commits: Sequence[str]) -> str:
    """One line per step as it ends (the progress of a bisect)."""
    calls = [j.call for j in step.judged]
    counts = ", ".join(f"{calls.count(c)} {c.value}" for c in Call if calls.count(c))
    return (
        f"jaxbench bisect: step {number}: {_pair(commits, step.base, step.head)}: "
        f"{counts or 'nothing measured'}; {step.rounds} rounds, {format_duration(step.seconds)}"
    )


def _finding_line(f: Finding) -> str:
    if f.evidence is None:
        return f"    {f.target.name}"
    return f"    {f.target.name}  {_ratio(f.evidence)}"


def _no_single(answer: Answer, commits: Sequence[str]) -> list[str]:
    rest = [f for f in answer.findings if not f.found]
    if not rest:
        return []
    unchanged = [f for f in rest if f.outcome in ("no change", "undecided") and f.index is None]
    if len(unchanged) == len(answer.findings):
        said = sorted({f.outcome for f in unchanged})
        lines = [
            f"No single step: the ends do not differ ({len(unchanged)} benchmark(s): "
            f"{' or '.join(said)} at the ends)."
        ]
        return lines
    lines = ["No single step for:"]
    for f in rest:
        where = ""
        if f.index is not None:
            share = f" holds {f.share:.0%} of the change" if f.share is not None else ""
            where = f" at {_commit(commits, f.index)}{share}"
        elif f.candidates:
            where = (
                f" ({_commit(commits, f.candidates[0] - 1)}..{_commit(commits, f.candidates[-1])})"
            )
        lines.append(f"    {f.target.name}{where}: {f.outcome}: {f.reason}")
    return lines


def _verdict_line(judged: Judged) -> str:
    rounds = f", {judged.rounds} rounds" if judged.rounds else ""
    return (
        f"       {judged.call.value:9}  {judged.target.name}  {_ratio(judged)}{rounds}: "
        f"{judged.reason}"
    )


def _step_block(number: int, step: StepRecord, commits: Sequence[str]) -> list[str]:
    lines = [
        f"  {number}. {_pair(commits, step.base, step.head)}  {step.rounds} rounds, "
        f"{format_duration(step.seconds)}"
    ]
    order = {Call.DIFFERENT: 0, Call.UNDECIDED: 1, Call.SAME: 2}
    judged = sorted(step.judged, key=lambda j: (order[j.call], j.target))
    same = [j for j in judged if j.call is Call.SAME]
    shown = [j for j in judged if j.call is not Call.SAME] + same[:SHOWN_SAME]
    lines += [_verdict_line(j) for j in shown]
    if len(same) > SHOWN_SAME:
        lines.append(f"       ... and {len(same) - SHOWN_SAME} more same (--format json)")
    return lines


def format_text(
    answer: Answer,
    commits: Sequence[str],
    subjects: Mapping[str, str],
    *,
    left_out: Sequence[str] = (),
) -> str:
    """The answer for people: the commits found, what has no single step, the steps."""
    n = len(commits) - 1
    lines = [
        f"Bisected {_commit(commits, 0)}..{_commit(commits, n)}: {n} commit(s) after GOOD "
        f"(first parent), {len(answer.findings)} benchmark(s)."
    ]
    for index in answer.culprits:
        commit = commits[index]
        subject = subjects.get(commit, "")
        lines.append(
            f"First commit of the step: {commit[:12]} ({index} of {n})"
            + (f" {subject!r}" if subject else "")
        )
        lines += [_finding_line(f) for f in answer.findings if f.found and f.index == index]
    lines += _no_single(answer, commits)
    lines += [f"Not bisected: {why}" for why in left_out]
    lines.append("Steps (base..head, places in the range; each benchmark's verdict):")
    for number, step in enumerate(answer.steps, 1):
        lines += _step_block(number, step, commits)
    lines.append(f"{len(answer.steps)} step(s) in {format_duration(answer.seconds)}.")
    return "\n".join(lines) + "\n"


def _num(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _verdict_entry(j: Judged) -> dict[str, Any]:
    return {
        "benchmark": j.target.benchmark,
        "params": list(j.target.params),
        "call": j.call.value,
        "ratio": _num(j.ratio),
        "low": _num(j.low),
        "high": _num(j.high),
        "p_value": j.p_value,
        "holm_p": j.holm_p,
        "rounds": j.rounds,
        "reason": j.reason,
        "base_value": _num(j.base_value),
        "head_value": _num(j.head_value),
    }


def _finding_entry(f: Finding, commits: Sequence[str]) -> dict[str, Any]:
    ev = f.evidence
    return {
        "benchmark": f.target.benchmark,
        "params": list(f.target.params),
        "kind": f.target.kind.value,
        "outcome": f.outcome,
        "reason": f.reason,
        "commit": commits[f.index] if f.index is not None else None,
        "index": f.index,
        "ratio": _num(ev.ratio) if ev else None,
        "low": _num(ev.low) if ev else None,
        "high": _num(ev.high) if ev else None,
        "pair": [commits[i] for i in f.pair] if f.pair else None,
        "share": _num(f.share),
        "share_high": _num(f.share_high),
        "base_value": _num(ev.base_value) if ev else None,
        "head_value": _num(ev.head_value) if ev else None,
    }


def format_json(
    answer: Answer,
    commits: Sequence[str],
    subjects: Mapping[str, str],
    *,
    env_name: str,
    event: tuple[int, Event] | None = None,
    left_out: Sequence[str] = (),
) -> str:
    """The versioned JSON document (see the module doc)."""
    culprits = [
        {
            "commit": commits[i],
            "index": i,
            "subject": subjects.get(commits[i], ""),
            "benchmarks": [
                _finding_entry(f, commits) for f in answer.findings if f.found and f.index == i
            ],
        }
        for i in answer.culprits
    ]
    steps = [
        {
            "base": commits[s.base],
            "head": commits[s.head],
            "base_index": s.base,
            "head_index": s.head,
            "seconds": round(s.seconds, 3),
            "rounds": s.rounds,
            "verdicts": [_verdict_entry(j) for j in s.judged],
        }
        for s in answer.steps
    ]
    event_doc = None
    if event is not None:
        number, e = event
        event_doc = {
            "number": number,
            "machine": e.machine,
            "env_name": e.env_name,
            "good_commit": e.good_commit,
            "bad_commit": e.bad_commit,
        }
    document = {
        "format": JSON_FORMAT,
        "good": commits[0],
        "bad": commits[-1],
        "commits": list(commits),
        "env_name": env_name,
        "event": event_doc,
        "single_step": answer.single,
        "culprits": culprits,
        "findings": [_finding_entry(f, commits) for f in answer.findings],
        "left_out": list(left_out),
        "steps": steps,
        "seconds": round(answer.seconds, 3),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
