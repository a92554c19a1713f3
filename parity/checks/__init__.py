"""Checks: pure judgements of one run or of two views.

`conformance` (what the agent sent that ACP does not allow, against the pinned schema of
`acp_schema`), `problems` (what went wrong in a run; kinds in `problem_kinds`) and
`expected` (those problems against the scenario's `expect_problems`), `diff` (two views
-> a categorized parity report; `differences` finds them, `diff_text` shows them).
"""
