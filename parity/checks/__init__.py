"""Checks: pure judgements of one run or of two views.

`conformance` (what the agent sent that ACP does not allow, against the pinned schema of
`acp_schema`), `problems` (what went wrong in a run; kinds in `problem_kinds`) and
`expected` (those problems against the scenario's `expect_problems`), `diff` (two views
-> a categorized parity report; `differences` finds them, `diff_text` shows them).
The public surface below loads on first use (`parity.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parity.lazy import surface

if TYPE_CHECKING:
    from parity.checks.conformance import conformance_findings
    from parity.checks.diff import ParityReport, compare
    from parity.checks.expected import Judged, judge
    from parity.checks.problems import Problem, run_problems

__all__ = [
    "Judged",
    "ParityReport",
    "Problem",
    "compare",
    "conformance_findings",
    "judge",
    "run_problems",
]

__getattr__ = surface(
    __name__,
    {
        "conformance_findings": "parity.checks.conformance",
        "ParityReport": "parity.checks.diff",
        "compare": "parity.checks.diff",
        "Judged": "parity.checks.expected",
        "judge": "parity.checks.expected",
        "Problem": "parity.checks.problems",
        "run_problems": "parity.checks.problems",
    },
)
