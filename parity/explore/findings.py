"""What a difference is, as a finding: its signature (category and path shape), and the
scenario file that keeps it. Pure.

Hypothesis shrinks one example per distinct failure, and tells failures apart by the
exception's type. `signature` turns a parity report into the key findings are grouped by
(the first unexplained difference's category, and its path with every index made `[*]`):
one bug that shows at step 3 in one example and step 5 in another is one finding, not
two; a different category or a different field is another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from parity.checks.diff import ParityReport
from parity.checks.differences import ABSENT, Difference
from parity.explore.generate import to_yaml

HARNESS_ERROR = "harness error"
"""A run the harness could not carry out (an exception, not a difference)."""

_INDEX = re.compile(r"\[-?\d+\]")


@dataclass(frozen=True)
class Signature:
    """What makes two findings the same finding."""

    category: str
    shape: str
    """The difference's path, indexes replaced by `[*]`: `steps[*].updates[*].content`."""

    def slug(self) -> str:
        """A file name for the finding: category and shape, lowercase, dashes."""
        text = f"{self.category}-{self.shape}".lower()
        return re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:80] or "finding"

    def __str__(self) -> str:
        return f"{self.category} at {self.shape}"


def shape(path: str) -> str:
    """`steps[3].updates[0].x` -> `steps[*].updates[*].x`."""
    return _INDEX.sub("[*]", path)


def signature(report: ParityReport, additive: bool = False) -> Signature | None:
    """The finding a report shows, or None when every difference is explained.

    `additive`: the other target is the reference plus increments (`plus,plus-full`), so
    what only the other side has (an extra update, a field the reference lacks) is what
    the increments add, not a finding; anything the reference has must stay the same."""
    for difference in report.differences:
        if additive and is_addition(difference):
            continue
        return Signature(difference.category, shape(difference.path))
    return None


METHOD_NOT_FOUND = -32601


def is_addition(difference: Difference) -> bool:
    """What a target that only adds to the reference may differ by: a value the reference
    lacks; a method the reference does not have (its -32601) that the other serves; and
    a count of the updates before an agent request (`after_updates`) grown by the
    updates it added."""
    if difference.ref is ABSENT:
        return True
    ref = difference.ref
    error = ref.get("error", ref) if isinstance(ref, dict) else None
    if isinstance(error, dict) and error.get("code") == METHOD_NOT_FOUND:
        return True
    grown = isinstance(ref, int) and isinstance(difference.other, int) and difference.other > ref
    return difference.path.endswith(".after_updates") and grown


@dataclass(frozen=True)
class Finding:
    """A minimal example of one signature, ready to be written."""

    signature: Signature
    scenario: dict[str, Any]
    report: str
    """The rendered parity report of the minimal example (`ParityReport.render`)."""
    reproduced: bool | None = None
    """Whether a fresh run of the written scenario showed it again (None: not checked)."""
    first_lines: int | None = None
    """The YAML lines of the first example that showed it, before any shrinking."""

    @property
    def lines(self) -> int:
        """The YAML lines of the example kept (the smallest seen)."""
        return len(to_yaml(self.scenario).splitlines())


def description(finding: Finding, targets: tuple[str, str], seed: int | None) -> str:
    """The `description` of a finding's file: where it came from and what it shows."""
    ref, other = targets
    how = f"seed {seed}" if seed is not None else "a random seed"
    again = {True: "reproduced on a fresh run", False: "NOT reproduced on a fresh run (flaky?)"}
    tail = f"; {again[finding.reproduced]}" if finding.reproduced is not None else ""
    return (
        f"parity explore finding: [{finding.signature.category}] "
        f"{finding.signature.shape}; {other} differs from {ref} "
        f"(targets {ref},{other}, {how}{tail})"
    )


def finding_text(finding: Finding, targets: tuple[str, str], seed: int | None) -> str:
    """The finding as a scenario file, with the report it gave as a comment at the end
    (a comment: the file stays exactly the scenario that was run)."""
    scenario = {**finding.scenario, "description": description(finding, targets, seed)}
    comment = "".join(f"# {line}\n" for line in finding.report.splitlines())
    return (
        to_yaml(scenario)
        + "\n# What parity explore saw (parity diff of the minimal example):\n"
        + comment
    )
