"""Checks: pure judgements of one run or of two views.

`conformance` (what the agent sent that ACP does not allow, against the pinned schema of
`acp_schema`), `problems` (what went wrong in a run; kinds in `problem_kinds`) and
`expected` (those problems against the scenario's `expect_problems`), `diff` (two views
-> a categorized parity report; `differences` finds them, `diff_text` shows them).

The public surface below is loaded on first use (PEP 562), as in `parity.fakellm`:
`python -m parity.checks.acp_schema fetch` imports this package first, and must not
have imported `acp_schema` already (runpy warns about that). Harness code imports each
name from the module that defines it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parity.checks.conformance import conformance_findings
    from parity.checks.diff import ParityReport, compare
    from parity.checks.expected import Judged, judge
    from parity.checks.problems import Problem, run_problems

_HOMES = {
    "conformance_findings": "parity.checks.conformance",
    "ParityReport": "parity.checks.diff",
    "compare": "parity.checks.diff",
    "Judged": "parity.checks.expected",
    "judge": "parity.checks.expected",
    "Problem": "parity.checks.problems",
    "run_problems": "parity.checks.problems",
}

__all__ = [
    "Judged",
    "ParityReport",
    "Problem",
    "compare",
    "conformance_findings",
    "judge",
    "run_problems",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
