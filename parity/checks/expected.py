"""Expected run problems: a run's problems against the scenario's `expect_problems`.

`judge(problems, scenario.expect_problems, target)` splits them into unexpected ones
(which fail the target's item, and which `parity record` refuses to record), expected
ones (listed in the summary with their reasons) and stale `expect_problems` entries
(declared for this target, matching nothing: they fail like stale diverge rules).
Pure; the problems come from `parity.checks.problems.run_problems`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from parity.checks.problems import Problem
from parity.scenario.model import ExpectedProblem


@dataclass
class Judged:
    """A run's problems against the scenario's `expect_problems`, for one target."""

    unexpected: list[Problem] = field(default_factory=list)
    expected: list[tuple[Problem, ExpectedProblem]] = field(default_factory=list)
    stale: list[ExpectedProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing fails the item: every problem expected, no stale entry."""
        return not self.unexpected and not self.stale


def applies(entry: ExpectedProblem, target: str) -> bool:
    return entry.targets is None or target in entry.targets


def explains(entry: ExpectedProblem, problem: Problem) -> bool:
    return entry.kind == problem.kind and (entry.match is None or entry.match in problem.message)


def judge(problems: Sequence[Problem], expected: Sequence[ExpectedProblem], target: str) -> Judged:
    """Each problem against the entries that apply to `target` (the first explaining one
    claims it); an applicable entry that explains nothing is stale."""
    entries = [e for e in expected if applies(e, target)]
    out = Judged()
    used: set[int] = set()
    for problem in problems:
        hit = next((i for i, e in enumerate(entries) if explains(e, problem)), None)
        if hit is None:
            out.unexpected.append(problem)
        else:
            used.add(hit)
            out.expected.append((problem, entries[hit]))
    out.stale = [e for i, e in enumerate(entries) if i not in used]
    return out


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


ExpectedRow = tuple[str, str, str, str, int]
"""(scenario, target, problem headline, reason, how many such problems) of one run."""


def summary_lines(rows: Sequence[ExpectedRow]) -> list[str]:
    """The summary's list of expected problems, per scenario x target."""
    if not rows:
        return []
    runs = {(r[0], r[1]) for r in rows}
    lines = [f"expected problems: {sum(r[4] for r in rows)} in {len(runs)} run(s)"]
    for scenario, target, problem, reason, times in sorted(rows):
        again = f" (x{times})" if times > 1 else ""
        lines.append(f"  {scenario} {target}: {problem}{again} ({reason})")
    return lines
