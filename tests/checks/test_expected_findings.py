"""`expect_problems` entries for a conformance finding (a `late_update`): they excuse the
findings they match for their targets, and nothing else."""

from __future__ import annotations

from parity.checks.expected import excused, judge
from parity.scenario.model import ExpectedProblem

LATE = "[late_update] step 3, frame 9: agent_message_chunk for session s after its prompt"
OTHER = "[schema] step 2, frame 4: session/update notification: bad"


def test_a_late_update_entry_excuses_only_matching_findings_of_its_targets() -> None:
    entry = ExpectedProblem("late_update", "wakes itself", ["native"], "agent_message_chunk")
    left, claimed = excused([LATE, OTHER], [entry], "native")
    assert left == [OTHER] and claimed == [(LATE, entry)]
    assert excused([LATE], [entry], "plus") == ([LATE], [])
    miss = ExpectedProblem("late_update", "wakes itself", None, "tool_call_update")
    assert excused([LATE], [miss], "native") == ([LATE], [])


def test_a_finding_entry_is_no_run_problems_entry() -> None:
    entry = ExpectedProblem("late_update", "wakes itself")
    assert judge([], [entry], "native").stale == []


NOT_JSON = (
    "[not_json] step 3, frame 6: invalid JSON: Expecting value: line 1 column 1 (char 0): "
    "'Client.listResources() called but server does not advertise resources capability'"
)


def test_a_not_json_entry_excuses_the_stray_line_it_names() -> None:
    entry = ExpectedProblem("not_json", "logs on stdout", ["native"], "does not advertise")
    assert excused([NOT_JSON, OTHER], [entry], "native") == ([OTHER], [(NOT_JSON, entry)])
    other_line = ExpectedProblem("not_json", "logs on stdout", ["native"], "something else")
    assert excused([NOT_JSON], [other_line], "native") == ([NOT_JSON], [])
    assert judge([], [entry], "native").stale == []
