"""Expected run problems: a run's problems against the scenario's `expect_problems`
and the target table's.

`judge(problems, scenario.expect_problems, target, standing=spec.expect_problems)`
splits them into unexpected ones (which fail the target's item, and which `parity
record` refuses to record), expected ones (listed in the summary with their reasons)
and stale scenario entries (declared for this target, matching nothing: they fail like
stale diverge rules). A target table's entries (`standing`) apply to every scenario the
target runs in, so one run that does not show the problem says nothing about them:
they are never stale in a run, and `unclaimed` finds those that claimed nothing in a
whole session instead (listed in the summary). Pure; the problems come from
`parity.checks.problems.run_problems`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from parity.checks.problems import Problem
from parity.scenario.model import ExpectedProblem


@dataclass
class Judged:
    """A run's problems against the scenario's `expect_problems`, for one target."""

    unexpected: list[Problem] = field(default_factory=list)
    expected: list[tuple[Problem, ExpectedProblem]] = field(default_factory=list)
    stale: list[ExpectedProblem] = field(default_factory=list)
    standing_used: list[int] = field(default_factory=list)
    """Indexes of the target table's entries that claimed a problem in this run."""

    @property
    def ok(self) -> bool:
        """Nothing fails the item: every problem expected, no stale entry."""
        return not self.unexpected and not self.stale


FINDING_KINDS = frozenset({"late_update", "not_json"})
"""Conformance finding kinds (`parity.checks.conformance`) an `expect_problems` entry may
excuse: a `late_update` is how an agent that wakes an idle session by itself (native's
background-job completion notice) shows on the wire; a `not_json` line is a known agent's
stray output on stdout (native's MCP client logging there), excused by its text (`match`)
where a scenario shows what causes it. Such an entry is no run problem's: `judge` leaves
it to `excused`."""


def excused(
    findings: Sequence[str], expected: Sequence[ExpectedProblem], target: str
) -> tuple[list[str], list[tuple[str, ExpectedProblem]]]:
    """The rendered findings (`[kind] ...`) no entry for `target` excuses, and the
    excused ones with their entry."""
    entries = [e for e in expected if applies(e, target) and e.kind in FINDING_KINDS]
    left: list[str] = []
    claimed: list[tuple[str, ExpectedProblem]] = []
    for finding in findings:
        entry = next(
            (
                e
                for e in entries
                if finding.startswith(f"[{e.kind}] ") and (e.match is None or e.match in finding)
            ),
            None,
        )
        if entry is None:
            left.append(finding)
        else:
            claimed.append((finding, entry))
    return left, claimed


def applies(entry: ExpectedProblem, target: str) -> bool:
    return entry.targets is None or target in entry.targets


def explains(entry: ExpectedProblem, problem: Problem) -> bool:
    return entry.kind == problem.kind and (entry.match is None or entry.match in problem.message)


def judge(
    problems: Sequence[Problem],
    expected: Sequence[ExpectedProblem],
    target: str,
    standing: Sequence[ExpectedProblem] = (),
) -> Judged:
    """Each problem against the scenario's entries that apply to `target`, then the
    target table's (`standing`); the first explaining entry claims it. A scenario's
    applicable entry that explains nothing is stale; a standing one is not (see the
    module docstring)."""
    entries = [e for e in expected if applies(e, target) and e.kind not in FINDING_KINDS]
    # The scenario's entries come first: the more specific declaration claims a problem
    # both explain, so the scenario's entry is not called stale because of the table.
    ordered = [*entries, *standing]
    out = Judged()
    used: set[int] = set()
    for problem in problems:
        hit = next((i for i, e in enumerate(ordered) if explains(e, problem)), None)
        if hit is None:
            out.unexpected.append(problem)
        else:
            used.add(hit)
            out.expected.append((problem, ordered[hit]))
    out.stale = [e for i, e in enumerate(entries) if i not in used]
    out.standing_used = sorted(i - len(entries) for i in used if i >= len(entries))
    return out


def unclaimed(
    declared: Mapping[str, Sequence[ExpectedProblem]], used: Iterable[tuple[str, Iterable[int]]]
) -> list[tuple[str, ExpectedProblem]]:
    """The target table entries that claimed no problem in any run of their target in a
    session, for the targets that ran at all (`used` has one row per run: the target and
    the `standing_used` indexes of that run). A target that did not run is absent: its
    entries were not put to the test."""
    ran: dict[str, set[int]] = {}
    for target, indexes in used:
        ran.setdefault(target, set()).update(indexes)
    return [
        (target, entry)
        for target in sorted(ran)
        for i, entry in enumerate(declared.get(target, ()))
        if i not in ran[target]
    ]


def unclaimed_lines(rows: Sequence[tuple[str, ExpectedProblem]]) -> list[str]:
    """The summary's list of target-table entries that claimed nothing in this session."""
    if not rows:
        return []
    lines = [
        f"target expect_problems that claimed no problem in this session ({len(rows)}; "
        "remove an entry the agent no longer needs):"
    ]
    lines += [f"  {describe(entry)}: {entry.reason}" for _, entry in rows]
    return lines


def describe(entry: ExpectedProblem) -> str:
    """`kind` plus its match and where it is declared, for stale-entry messages."""
    text = f"kind {entry.kind}"
    if entry.match is not None:
        text += f", match {entry.match!r}"
    return (
        f"{entry.where}: expect_problems ({text})" if entry.where else f"expect_problems ({text})"
    )


def failure_block(judged: Judged, target: str) -> str:
    """The text a failing item shows for its run problems and stale entries."""
    lines = []
    if judged.unexpected:
        lines.append(f"run problems ({len(judged.unexpected)}), not declared in expect_problems:")
        lines += [p.indented() for p in judged.unexpected]
    if judged.stale:
        lines.append(
            f"stale expect_problems ({len(judged.stale)}): declared for {target}, did not occur:"
        )
        lines += [f"  {describe(e)}: {e.reason}" for e in judged.stale]
    if judged.expected:
        lines.append(f"expected problems ({len(judged.expected)}):")
        lines += [f"{p.indented()}\n      ({e.reason})" for p, e in judged.expected]
    if judged.unexpected:
        lines.append(
            "a run with problems is never a passing snapshot: fix the cause, or declare it "
            "under `expect_problems` with a reason (docs/scenarios.md)"
        )
    return "\n".join(lines)
