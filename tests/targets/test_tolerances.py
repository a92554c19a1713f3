"""A target table's `timeouts` and `expect_problems`: parsing, errors, how they meet a
scenario's (pure). `tests/suite/test_target_tables.py` runs them through real processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from parity.checks.expected import judge, unclaimed, unclaimed_lines
from parity.checks.problems import Problem
from parity.config.project import load_config
from parity.driver.state import DEFAULT_TIMEOUTS
from parity.scenario.model import ExpectedProblem
from parity.targets.spec import TargetConfigError, parse_target
from parity.targets.tolerances import effective_timeouts

BASE = {"family": "peer", "dialect": "openai-chat", "fixture_tools": "mcp", "command": ["a"]}


def test_a_table_sets_timeouts_and_expected_problems() -> None:
    spec = parse_target(
        "mine",
        {
            **BASE,
            "timeouts": {"startup": 30, "response": 20.5},
            "expect_problems": [
                {"kind": "exit", "match": "signal 15", "reason": "it ignores EOF"},
                {"kind": "unused-llm", "reason": "it never asks for a title"},
            ],
        },
        "parity.toml",
    )
    assert spec.timeouts == {"startup": 30.0, "response": 20.5}
    exit_, unused = spec.expect_problems
    assert (exit_.kind, exit_.match, exit_.reason, exit_.targets) == (
        "exit",
        "signal 15",
        "it ignores EOF",
        None,
    )
    assert str(exit_.where) == "parity.toml: target 'mine'"
    assert (unused.kind, unused.match) == ("unused-llm", None)
    plain = parse_target("plain", BASE, "parity.toml")
    assert (plain.timeouts, plain.expect_problems) == ({}, ())


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"timeouts": 30}, "`timeouts` must be a table, e.g. {startup = 30}"),
        ({"timeouts": {"start": 30}}, "`timeouts.start`: unknown key; use startup, response, run"),
        ({"timeouts": {"startup": True}}, "`timeouts.startup` must be seconds above 0"),
        ({"timeouts": {"response": 0}}, "`timeouts.response` must be seconds above 0"),
        ({"timeouts": {"run": 30000}}, "at most 3600, got 30000"),
        ({"expect_problems": {"kind": "exit"}}, "`expect_problems` must be a list of tables"),
        ({"expect_problems": ["exit"]}, "`expect_problems[0]` must be a table"),
        (
            {"expect_problems": [{"kind": "exit", "reason": "r", "targets": ["x"]}]},
            "`expect_problems[0]`: unknown key(s) ['targets'] (a target's entries apply to it",
        ),
        (
            {"expect_problems": [{"kind": "exit", "reason": "r"}, {"kind": "exot", "reason": "r"}]},
            "`expect_problems[1].kind` must be a problem kind (timeout, trigger,",
        ),
        ({"expect_problems": [{"kind": "exit"}]}, "`expect_problems[0].reason` is required"),
        (
            {"expect_problems": [{"kind": "exit", "reason": "  "}]},
            "`expect_problems[0].reason` is required",
        ),
        (
            {"expect_problems": [{"kind": "exit", "reason": "r", "match": ""}]},
            "`expect_problems[0].match` must be a non-empty string",
        ),
    ],
)
def test_errors_name_the_file_the_target_and_the_key(
    extra: dict[str, object], message: str
) -> None:
    with pytest.raises(TargetConfigError) as caught:
        parse_target("mine", {**BASE, **extra}, "proj/parity.toml")
    assert str(caught.value).startswith("proj/parity.toml: target 'mine': ")
    assert message in str(caught.value)


def test_a_project_table_adds_them_to_a_builtin(tmp_path: Path) -> None:
    (tmp_path / "parity.toml").write_text(
        "[targets.opencode]\ntimeouts = {startup = 40}\n"
        'expect_problems = [{kind = "exit", reason = "slow to stop"}]\n'
    )
    spec = load_config(tmp_path).targets["opencode"]
    assert spec.timeouts == {"startup": 40.0}
    assert [e.kind for e in spec.expect_problems] == ["exit"]
    assert str(spec.expect_problems[0].where).endswith("parity.toml: target 'opencode'")


def test_where_both_set_a_timeout_the_larger_wins() -> None:
    defaults = {"startup": 15.0, "response": 15.0, "run": 120.0}
    assert effective_timeouts(defaults, {}, {}) == defaults
    # The target alone replaces the default, up or down.
    assert effective_timeouts(defaults, {}, {"startup": 40, "response": 5}) == {
        "startup": 40,
        "response": 5,
        "run": 120.0,
    }
    both = effective_timeouts(
        defaults, {"startup": 1, "response": 60}, {"startup": 40, "response": 5}
    )
    assert both == {"startup": 40, "response": 60, "run": 120.0}
    assert effective_timeouts(DEFAULT_TIMEOUTS, {"run": 200}, {}) == {
        **DEFAULT_TIMEOUTS,
        "run": 200,
    }


def _problem(kind: str, message: str) -> Problem:
    return Problem(kind=kind, message=message)


def test_table_entries_claim_after_the_scenario_and_are_never_stale_in_one_run() -> None:
    scenario = [ExpectedProblem("exit", "the scenario's reason")]
    table = (
        ExpectedProblem("exit", "the table's exit"),
        ExpectedProblem("garbage", "the table's garbage"),
        ExpectedProblem("timeout", "the table's timeout"),
    )
    problems = [_problem("exit", "agent exited"), _problem("garbage", "non-JSON line")]
    judged = judge(problems, scenario, "mine", table)
    assert judged.unexpected == []
    assert [e.reason for _, e in judged.expected] == [
        "the scenario's reason",
        "the table's garbage",
    ]
    assert judged.stale == []  # the table's timeout did not occur: not stale in a run
    assert judged.standing_used == [1]
    assert judged.ok
    # Without the table the garbage is unexpected; a scenario entry that matches
    # nothing is stale, table or not.
    alone = judge(problems, [], "mine")
    assert [p.kind for p in alone.unexpected] == ["exit", "garbage"]
    stale = judge([], scenario, "mine", table)
    assert [e.reason for e in stale.stale] == ["the scenario's reason"]


def test_a_table_entry_that_claimed_nothing_in_a_session_is_listed() -> None:
    table = {
        "mine": (ExpectedProblem("exit", "a"), ExpectedProblem("garbage", "b")),
        "idle": (ExpectedProblem("exit", "c"),),
    }
    # "mine" ran twice (the garbage entry claimed once); "idle" did not run at all.
    rows = unclaimed(table, [("mine", ()), ("mine", (1,))])
    assert rows == [("mine", table["mine"][0])]
    assert unclaimed(table, [("mine", (0,)), ("mine", (1,))]) == []
    lines = unclaimed_lines(rows)
    assert lines[0].startswith("target expect_problems that claimed no problem in this session (1")
    assert lines[1] == "  expect_problems (kind exit): a"
    assert unclaimed_lines([]) == []
