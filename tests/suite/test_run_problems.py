"""A broken run is never a passing snapshot (`parity.checks.problems`), end to end.

One throwaway project holds one scenario per run-problem kind, each run against a tiny
stdlib agent from `tests/fixtures/agents/` that causes exactly that problem (or the plain
stub agent, where the scenario causes it). One `parity run` shows that every problem fails its item
with its kind and step; one `parity record` that nothing is written for any of them.
Declaring each under `expect_problems` makes them pass and record; a declared problem
that does not occur is stale and fails. The kinds no agent can cause cheaply (an
escaped child holding a request open, a stdin pipe filling up, a frame flood, a spawn
failure) are checked on transcripts by hand below.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from parity.checks.expected import FINDING_KINDS, judge
from parity.checks.problem_kinds import KINDS
from parity.checks.problems import Problem, run_problems
from parity.core.transcript import ModelRequest, StepRecord, Transcript
from parity.driver.steps import prompt_outcome, trigger_text
from parity.scenario.load import build_scenario
from parity.scenario.model import ExpectedProblem, Scenario
from parity.scenario.schema_findings import schema
from tests.support.project import Project, mini_target

AGENTS = Path(__file__).resolve().parents[1] / "fixtures" / "agents"

OPEN = """\
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: go}
"""
TEXT = "llm:\n  - text: hi\n"
NOTE_TOOL = (
    "tools:\n  - {name: write_note, description: Write., result: ok, approval: ask}\n"
    "llm:\n  - tool_calls: [{id: call-1, name: write_note, arguments: {}}]\n  - text: done\n"
)


@dataclass(frozen=True)
class Case:
    name: str
    agent: str
    body: str
    needles: tuple[str, ...]
    """What the failing item must say (each its own problem line)."""
    expect: tuple[str, ...]
    """The kinds to declare under expect_problems (one entry claims all of its kind)."""
    count: int = 0
    """How many problems the run has (default: one per needle)."""

    @property
    def problems(self) -> int:
        return self.count or len(self.needles)

    @property
    def target(self) -> str:
        return self.agent.removesuffix("_agent").replace("_", "-")

    def text(self, declared: bool = False) -> str:
        out = f"description: the {self.name} run problem\ntargets: [{self.target}]\n{self.body}"
        if declared and self.expect:
            out += "expect_problems:\n" + "".join(
                f"  - {{kind: {k}, reason: the {self.agent} causes it on purpose}}\n"
                for k in self.expect
            )
        return out


CASES = (
    Case(
        "timeout",
        "silent_agent",
        "timeouts: {response: 1}\n" + TEXT + OPEN + "  - prompt: {session: s1, text: again}\n",
        (
            '[timeout] step 3: no response to prompt s1 "go" within the response timeout (1 s)',
            '[stopped] run stopped at step 3 (prompt s1 "go"); 1 later step(s) not run',
        ),
        ("timeout", "stopped"),
    ),
    Case(
        "trigger-no-response",
        "silent_agent",
        "timeouts: {response: 1}\n"
        + TEXT
        + OPEN.replace("text: go}", "text: go, cancel: {after: {update: agent_message_chunk}}}"),
        (
            '[trigger] step 3 (prompt s1 "go"): cancel trigger `after update agent_message_chunk`'
            " never fired (0 of 1 agent_message_chunk update(s) came); no response within 1 s",
            "[stopped] run stopped at step 3",
        ),
        ("trigger", "stopped"),
    ),
    Case(
        "timeout-after-cancel",
        "silent_agent",
        "timeouts: {response: 1}\n"
        + TEXT
        + OPEN.replace("text: go}", "text: go, cancel: {after: {ms: 100}}}"),
        (
            '[timeout] step 3: no response to prompt s1 "go" within the response timeout (1 s),'
            " although its cancel trigger fired",
            "[stopped] run stopped at step 3",
        ),
        ("timeout", "stopped"),
    ),
    Case(
        "trigger-ended",
        "stub",
        TEXT + OPEN.replace("text: go}", "text: go, cancel: {after: {update: tool_call}}}"),
        (
            '[trigger] step 3 (prompt s1 "go"): cancel trigger `after update tool_call` never'
            " fired (0 of 1 tool_call update(s) came); the prompt ended first, with stopReason"
            " end_turn",
        ),
        ("trigger",),
    ),
    Case(
        "run-timeout",
        "silent_agent",
        "timeouts: {run: 1, response: 10}\n" + TEXT + OPEN,
        (
            '[run-timeout] step 3: run timeout (1 s) reached during prompt s1 "go"',
            "[run-timeout] run timeout (1 s) reached",
            "[stopped] run stopped at step 3",
        ),
        ("run-timeout", "stopped"),
    ),
    Case(
        "exit",
        "exit_agent",
        TEXT + OPEN,
        (
            '[exit] step 3: agent exited during prompt s1 "go" (exit code 3); stderr tail:',
            "[stopped] run stopped at step 3",
        ),
        ("exit", "stopped"),
    ),
    Case(
        "garbage",
        "garbage_agent",
        TEXT + OPEN,
        ('[garbage] step 3 (prompt s1 "go"): frame 5: non-JSON line on stdout',),
        ("garbage",),
    ),
    Case(
        "capability",
        "capability_agent",
        TEXT + OPEN,
        (
            '[capability] step 3 (prompt s1 "go"): agent called fs/read_text_file without the'
            " client capability",
        ),
        ("capability",),
    ),
    Case(
        "script",
        "stub",
        OPEN.split("  - new_session")[0]
        + "  - list_sessions: {}\n  - list_sessions: {cursor: next}\n",
        (
            "[script] step 3 (list_sessions): ",
            "cursor: next, but the previous list had no nextCursor",
            "[stopped] run stopped at step 3 (list_sessions); 0 later step(s) not run",
        ),
        ("script", "stopped"),
        count=2,
    ),
    Case(
        "unknown-endpoint",
        "endpoint_agent",
        TEXT + OPEN,
        (
            '[unknown-endpoint] step 3 (prompt s1 "go"): the fake LLM answered POST'
            " /v9/completions with 404: unknown endpoint",
        ),
        ("unknown-endpoint",),
    ),
    Case(
        "malformed-request",
        "malformed_agent",
        TEXT + OPEN,
        (
            '[malformed-request] step 3 (prompt s1 "go"): the fake LLM answered POST /stream'
            " with 409: malformed request: `messages` must be a list",
        ),
        ("malformed-request",),
    ),
    Case(
        "unknown-tool",
        "unknown_tool_agent",
        TEXT + OPEN,
        (
            '[unknown-tool] step 3 (prompt s1 "go"): the fake LLM answered POST /tools/call'
            " with 409: unknown tool: ghost_tool",
        ),
        ("unknown-tool",),
    ),
    Case(
        "script-exhausted",
        "stub",
        TEXT + OPEN + "  - prompt: {session: s1, text: again}\n",
        (
            '[script-exhausted] step 4 (prompt s1 "again"): the fake LLM answered POST /stream'
            " with 409: script exhausted",
        ),
        ("script-exhausted",),
    ),
    Case(
        "no-entry-matched",
        "stub",
        "llm:\n  - {text: hi, match: {contains: zzz}}\n" + OPEN,
        ('[no-entry-matched] step 3 (prompt s1 "go"): the fake LLM answered POST /stream',),
        ("no-entry-matched",),
    ),
    Case(
        "unused-llm",
        "stub",
        "llm:\n  - text: hi\n  - text: never asked for\n" + OPEN,
        ("[unused-llm] scripted llm[1] (line 5) was never used by the run",),
        ("unused-llm",),
    ),
    Case(
        "approval",
        "stub",
        NOTE_TOOL + OPEN,
        (
            '[approval] step 3 (prompt s1 "go"): fixture tool `write_note` (approval: ask) was'
            " called via /tools/call (call-1) without a session/request_permission for it",
        ),
        ("approval",),
    ),
    Case(
        "approval-refused",
        "permission_agent",
        NOTE_TOOL + "client: {permission: reject-once}\n" + OPEN,
        (
            '[approval] step 3 (prompt s1 "go"): fixture tool `write_note` (approval: ask) was'
            " called via /tools/call (call-1) although the client refused its"
            " session/request_permission",
        ),
        ("approval",),
    ),
)

CLEAN = Case(
    "clean", "permission_agent", NOTE_TOOL + "client: {permission: allow-once}\n" + OPEN, (), ()
)
"""Asks, is allowed, calls: no problem (the approval check has no false positive)."""


def _project(root: Path, declared: bool) -> Project:
    proj = Project(root)
    proj.write(
        "parity.toml",
        "".join(
            mini_target(c.target, AGENTS / f"{c.agent}.py")
            for c in {c.agent: c for c in (*CASES, CLEAN)}.values()
        ),
    )
    for case in (*CASES, CLEAN):
        proj.write(f"scenarios/kinds/{case.name}.yaml", case.text(declared))
    return proj


def _sections(stdout: str) -> dict[str, str]:
    """Failure sections by item (`kinds/timeout::silent`), as pytest prints them (each
    up to the next item's or the next summary's separator line)."""
    parts = re.split(r"^_{3,} (\S+) _{3,}$", stdout, flags=re.M)
    return {
        parts[i]: re.split(r"^[=-]{3,} .+ [=-]{3,}$", parts[i + 1], flags=re.M)[0]
        for i in range(1, len(parts) - 1, 2)
    }


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str, str]:
    """The undeclared project after one `parity run` and one `parity record`."""
    proj = _project(tmp_path_factory.mktemp("broken") / "proj", declared=False)
    run = proj.parity("run", "-n", "2", ci=True)
    record = proj.parity("record", "-n", "2")
    return proj, run.stdout, record.stdout


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_problem_fails_its_item(broken: tuple[Project, str, str], case: Case) -> None:
    _, run, _ = broken
    assert f"FAILED scenarios/kinds/{case.name}.yaml::{case.target}" in run, run
    section = _sections(run)[f"kinds/{case.name}::{case.target}"]
    assert f"kinds/{case.name}: the {case.target} run had " in section
    for needle in case.needles:
        assert needle in section, section
    assert f"run problems ({case.problems}), not declared in expect_problems:" in section
    assert "a run with problems is never a passing snapshot" in section
    # Under CI the short summary repeats the headline only, not the whole failure text.
    (line,) = [x for x in run.splitlines() if x.startswith(f"FAILED scenarios/kinds/{case.name}.")]
    assert line.endswith(f"{case.problems} run problem(s) the scenario does not expect")
    assert case.needles[0] not in run[run.index("short test summary info") :]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_record_refuses_a_run_with_undeclared_problems(
    broken: tuple[Project, str, str], case: Case
) -> None:
    proj, _, record = broken
    assert f"FAILED scenarios/kinds/{case.name}.yaml::{case.target}" in record
    section = _sections(record)[f"kinds/{case.name}::{case.target}"]
    assert f"nothing was written to snapshots/kinds/{case.name}/{case.target}.yaml" in section
    assert case.needles[0] in section
    assert not proj.snapshot(f"kinds/{case.name}", case.target).exists()


def test_a_clean_run_passes_and_run_never_writes_a_snapshot(
    broken: tuple[Project, str, str],
) -> None:
    proj, run, record = broken
    assert "FAILED scenarios/kinds/clean.yaml::permission" in run
    section = _sections(run)["kinds/clean::permission"]
    assert section.count("parity record scenarios/kinds/clean.yaml --targets permission") == 1
    assert "PASSED scenarios/kinds/clean.yaml::permission" in record
    assert proj.snapshot("kinds/clean", "permission").exists()
    assert len(list((proj.root / "snapshots").rglob("*.yaml"))) == 1


@pytest.fixture(scope="module")
def declared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str, str]:
    """The project with every problem declared, after `parity record` then `parity run`."""
    proj = _project(tmp_path_factory.mktemp("declared") / "proj", declared=True)
    record = proj.parity("record", "-n", "2")
    run = proj.parity("run", "-n", "2")
    return proj, record.stdout, run.stdout


def test_declared_problems_pass_record_and_are_listed(
    declared: tuple[Project, str, str],
) -> None:
    proj, record, run = declared
    for case in CASES:
        for out in (record, run):
            assert f"PASSED scenarios/kinds/{case.name}.yaml::{case.target}" in out, out
        assert proj.snapshot(f"kinds/{case.name}", case.target).exists()
    total = sum(c.problems for c in CASES)
    assert f"\nexpected problems: {total} in {len(CASES)} run(s)\n" in run
    words = " ".join(run.split())  # the summary wraps long lines
    assert (
        'kinds/timeout silent: [timeout] step 3: no response to prompt s1 "go" within the '
        "response timeout (1 s) (the silent_agent causes it on purpose)"
    ) in words


def test_a_declared_problem_that_did_not_occur_is_stale(
    declared: tuple[Project, str, str], tmp_path: Path
) -> None:
    proj = Project(tmp_path / "proj")
    shutil.copytree(declared[0].root, proj.root)
    proj.write(
        "scenarios/kinds/clean.yaml",
        CLEAN.text()
        + "expect_problems:\n"
        + "  - {kind: timeout, reason: it used to hang}\n"
        + "  - {kind: approval, reason: never asked, targets: [permission], match: without}\n",
    )
    path = "scenarios/kinds/exit.yaml"
    proj.write(
        path,
        proj.root.joinpath(path).read_text().replace("kind: exit,", "kind: exit, match: signal 9,"),
    )
    done = proj.parity("run", "scenarios/kinds/clean.yaml", "scenarios/kinds/exit.yaml")
    assert done.returncode == 1
    sections = _sections(done.stdout)
    clean = sections["kinds/clean::permission"]
    assert "kinds/clean: 2 expect_problems entr(ies) did not occur on permission" in clean
    assert "stale expect_problems (2): declared for permission, did not occur:" in clean
    assert re.search(r"clean\.yaml:\d+:5: expect_problems \(kind timeout\): it used to hang", clean)
    assert "(kind approval, match 'without'): never asked" in clean
    # A `match` that no longer matches leaves the problem undeclared and the entry stale.
    exit_ = sections["kinds/exit::exit"]
    assert "[exit] step 3: agent exited during" in exit_
    assert "(kind exit, match 'signal 9')" in exit_


# -- the scenario key ------------------------------------------------------------------


def test_the_schema_lists_every_kind() -> None:
    enum = schema()["$defs"]["expectedProblem"]["properties"]["kind"]["enum"]
    # Run problems, then the conformance findings an entry may excuse.
    assert enum == [*KINDS, *sorted(FINDING_KINDS)]
    docs = (Path(__file__).parents[2] / "docs" / "scenarios.md").read_text()
    for kind in KINDS:
        assert f"| `{kind}` |" in docs


def test_expect_problems_errors_point_at_file_and_line(tmp_path: Path) -> None:
    text = (
        "description: x\ntargets: [plus]\nexpect_problems:\n"
        "  - {kind: timout, reason: x}\n"
        "  - {kind: exit, reason: '  '}\n"
        "  - {kind: exit, reason: y, targets: [native]}\n"
        "  - {kind: stopped}\n"
        "  - {kind: stopped, reason: a}\n"
        "  - {kind: stopped, reason: b}\n"
        "steps:\n  - initialize: {}\n"
    )
    from parity.scenario.load import check_text

    found = [str(f) for f in check_text(text, "s.yaml")[0]]
    assert found == [
        "s.yaml:4:12: expect_problems[0].kind: expected one of "
        + ", ".join([*KINDS, *sorted(FINDING_KINDS)])
        + "; got string 'timout' (did you mean 'timeout'?)",
        "s.yaml:5:26: expect_problems[1].reason: reason is blank (every expected problem says "
        "which fact of the target causes it)",
        "s.yaml:6:39: expect_problems[2].targets[0]: target 'native' is not in this "
        "scenario's targets (this scenario runs plus)",
        "s.yaml:7:5: expect_problems[3]: missing required key 'reason'",
        "s.yaml:8:5: expect_problems[4]: the same problem is already expected at line 7 (the "
        "first entry claims every problem it matches, so this one would be stale)",
        "s.yaml:9:5: expect_problems[5]: the same problem is already expected at line 7 (the "
        "first entry claims every problem it matches, so this one would be stale)",
    ]
    good = build_scenario(
        text.split("expect_problems")[0]
        + "expect_problems:\n  - {kind: exit, reason: r, match: m}\nsteps: [{initialize: {}}]\n",
        tmp_path / "s.yaml",
    )
    (entry,) = good.expect_problems
    assert (entry.kind, entry.reason, entry.targets, entry.match) == ("exit", "r", None, "m")
    assert entry.where is not None and entry.where.line == 4


# -- problems no agent causes cheaply, on transcripts by hand ----------------------------


def _scenario(tmp_path: Path, extra: str = "") -> Scenario:
    return build_scenario(
        "description: x\ntargets: [plus]\n" + extra + OPEN, tmp_path / "scenarios" / "x.yaml"
    )


def _transcript(**fields: Any) -> Transcript:
    steps = [
        StepRecord(index=i, kind=k, label=lbl, t_start=t, t_end=t + 1)
        for i, (k, lbl, t) in enumerate(
            [
                ("initialize", "initialize", 0.0),
                ("new_session", "new_session s1", 1.0),
                ("prompt", 'prompt s1 "go"', 2.0),
            ]
        )
    ]
    return Transcript(scenario="x", target="plus", run_id="r", steps=steps, **fields)


def test_driver_texts_are_classified(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path)
    texts = [
        "cannot start target 'ghost': [Errno 2] No such file or directory",
        "the agent did not read our answer to session/request_permission",
        "frame limit (200000) reached: 3 later line(s) from the agent were read but not recorded",
        "driver error: stdout reader failed: ValueError()",
        "agent exited by itself before teardown (exit code 0)",
        "... and 7 more (non-JSON line)",
        "frame 9: too deeply nested frame on stdout: JSON nested 600 levels deep, cut at 100",
        "leftover processes: 3 process(es) agent process 0 started were still running after",
        "fs escape: the agent's fs/write_text_file of /w/link/x was refused: ...",
        "... and 4 more (fs escape)",
        "something new the driver says",
    ]
    found = run_problems(scenario, _transcript(problems=texts))
    # A limit reached comes first (issue 33): it explains what follows it.
    assert [p.kind for p in found] == [
        "frame-limit",
        "startup",
        "stdin",
        "driver",
        "exit",
        "garbage",
        "garbage",
        "leftover",
        "escape",
        "escape",
        "other",
    ]
    assert all(p.step is None for p in found) and found[-1].message == texts[-1]


def test_a_request_still_open_when_the_run_ended_is_left_open(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path, "llm:\n  - then: hang\n")
    request = ModelRequest(
        seq=0,
        t=2.5,
        method="POST",
        path="/stream",
        dialect="parity-stream",
        body=None,
        entry=0,
        problem="run closed",
    )
    (found,) = run_problems(scenario, _transcript(model_requests=[request]))
    assert found == Problem(
        "left-open",
        'step 3 (prompt s1 "go"): the fake LLM\'s POST /stream was still open when the run ended',
        3,
    )


def test_a_parallel_block_reports_its_failing_branch_once(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path)
    problem = 'no response to prompt s1 "x" within the response timeout (1 s)'
    t = _transcript()
    t.steps += [
        StepRecord(
            index=3,
            kind="parallel",
            label="parallel",
            problem="a parallel step failed: " + problem,
            t_start=3.0,
            t_end=4.0,
        ),
        StepRecord(
            index=4, kind="prompt", label='prompt s1 "x"', problem=problem, t_start=3.0, t_end=4.0
        ),
    ]
    found = run_problems(scenario, t)
    assert [str(p) for p in found] == [
        '[timeout] step 5: no response to prompt s1 "x" within the response timeout (1 s)'
    ]


def test_judge_applies_entries_per_target_and_by_match() -> None:
    problems = [
        Problem("exit", "step 3: agent exited (exit code 3)", 3),
        Problem("stopped", "run stopped", 3),
    ]
    entries = [
        ExpectedProblem("exit", "r1", ["native"]),
        ExpectedProblem("exit", "r2", None, "code 3"),
        ExpectedProblem("timeout", "r3", ["native"]),
    ]
    plus = judge(problems, entries, "plus")
    assert [e.reason for _, e in plus.expected] == ["r2"]
    assert plus.unexpected == [problems[1]] and plus.stale == [] and not plus.ok
    native = judge(problems[:1], entries, "native")
    assert [e.reason for _, e in native.expected] == ["r1"]
    assert [e.reason for e in native.stale] == ["r2", "r3"]


def test_trigger_and_outcome_words() -> None:
    assert (
        trigger_text({"after": {"update": "tool_call", "count": 2}})
        == "after update tool_call, count 2"
    )
    assert trigger_text({"after": {"llm_request": 1}, "via": "cancel_request"}) == (
        "after llm_request 1 via cancel_request"
    )
    assert trigger_text({"after": {"ms": 500}}) == "after ms 500"
    assert prompt_outcome({"result": {"stopReason": "end_turn"}}) == "with stopReason end_turn"
    assert (
        prompt_outcome({"error": {"code": -32602, "message": "bad"}}) == "with error -32602 (bad)"
    )


def test_model_calls_in_another_dialect_than_declared_are_a_problem(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path)
    calls = [
        ModelRequest(seq=0, t=2.5, method="POST", path="/v1/responses", dialect="x", body=None),
        ModelRequest(seq=1, t=2.6, method="POST", path="/v1/responses", dialect="x", body=None),
        ModelRequest(seq=2, t=2.7, method="GET", path="/v1/models", dialect="x", body=None),
    ]
    found = run_problems(scenario, _transcript(dialect="openai-chat", model_requests=calls))
    assert [(p.kind, p.step) for p in found] == [("dialect", 3)]  # once, at the prompt
    assert "declares dialect openai-chat" in found[0].message
    assert 'set `dialect = "openai-responses"`' in found[0].message
    ok = _transcript(dialect="openai-responses", model_requests=calls)
    assert run_problems(scenario, ok) == []
