"""A target table's `timeouts` and `expect_problems`, through real agent processes and the
real `parity record` (docs/targets.md, "Keys").

One throwaway project: a slow-starting agent (`slow_start_agent.py`, 2 s before it
reads anything) under a scenario whose startup timeout is 1 s, once as is and once with
`timeouts = {startup = 10}` in its table; an agent that prints a non-JSON line
(`garbage_agent.py`), once as is and once with the problem in its table's
`expect_problems`, next to an entry that never occurs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.project import Project, mini_target

AGENTS = Path(__file__).resolve().parents[1] / "fixtures" / "agents"

TURN = """\
llm:
  - text: hello there
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: say hello}
"""


def _project(root: Path) -> Project:
    proj = Project(root)
    slow = AGENTS / "slow_start_agent.py"
    noisy = AGENTS / "garbage_agent.py"
    proj.write(
        "parity.toml",
        mini_target("slow", slow, 'SLOW_START = "2"')
        + mini_target("slow-raised", slow, 'SLOW_START = "2"')
        + "timeouts = {startup = 10}\n"
        + mini_target("noisy", noisy)
        + mini_target("noisy-expected", noisy)
        + 'expect_problems = [\n  {kind = "garbage", match = "non-JSON line", '
        + 'reason = "it prints debug lines on stdout"},\n'
        + '  {kind = "exit", reason = "it used to crash"},\n]\n',
    )
    proj.write(
        "scenarios/tables/slow.yaml",
        "description: a slow start\ntargets: [slow, slow-raised]\n"
        # The scenario's own startup timeout is below the agent's start-up time: only
        # the table's larger one lets it through (the larger of the two wins).
        "timeouts: {startup: 1}\n" + TURN,
    )
    proj.write(
        "scenarios/tables/noisy.yaml",
        "description: a noisy agent\ntargets: [noisy, noisy-expected]\n" + TURN,
    )
    return proj


def _status(out: str, item: str) -> str:
    """PASSED or FAILED, as the verbose line of `item` says."""
    found = re.search(rf"^scenarios/{re.escape(item)} (PASSED|FAILED)", out, flags=re.M)
    assert found is not None, out
    return found.group(1)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str]:
    proj = _project(tmp_path_factory.mktemp("tables") / "proj")
    done = proj.parity("record", timeout=300)
    return proj, done.stdout


def test_a_table_timeout_lets_a_slow_agent_pass_where_the_scenario_timeout_fails(
    recorded: tuple[Project, str],
) -> None:
    proj, out = recorded
    assert _status(out, "tables/slow.yaml::slow") == "FAILED"
    assert "no response to initialize within the startup timeout (1 s)" in out
    assert not proj.snapshot("tables/slow", "slow").exists()
    assert _status(out, "tables/slow.yaml::slow-raised") == "PASSED"
    view = proj.snapshot("tables/slow", "slow-raised").read_text()
    assert "hello there" in view


def test_an_expected_problem_in_a_table_claims_the_problem(recorded: tuple[Project, str]) -> None:
    proj, out = recorded
    assert _status(out, "tables/noisy.yaml::noisy") == "FAILED"
    assert not proj.snapshot("tables/noisy", "noisy").exists()
    assert _status(out, "tables/noisy.yaml::noisy-expected") == "PASSED"
    assert proj.snapshot("tables/noisy", "noisy-expected").exists()
    words = " ".join(out.split())  # the summary wraps long lines
    assert re.search(
        r"tables/noisy noisy-expected: \[garbage\] step 3 \(prompt s1 \"say hello\"\): "
        r"frame \d+: non-JSON line on stdout: .* \(it prints debug lines on stdout\)",
        words,
    ), words


def test_a_table_entry_that_never_occurred_is_listed(recorded: tuple[Project, str]) -> None:
    _, out = recorded
    words = " ".join(out.split())
    assert re.search(
        r"target expect_problems that claimed no problem in this session \(1; remove an entry "
        r"the agent no longer needs\): \S*/proj/parity\.toml: target 'noisy-expected': "
        r"expect_problems \(kind exit\): it used to crash",
        words,
    ), words
