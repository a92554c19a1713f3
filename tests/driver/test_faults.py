"""One fixture agent per fault: the driver records each and leaves nothing running."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from parity.driver import recording
from parity.driver.jsonrpc import OVERSIZE_HEAD
from parity.driver.process import Ladder, group_members
from parity.driver.run import run_scenario, wait_for_cleanup
from parity.driver.state import RunPaths
from parity.targets.launch import Launch
from tests.support.driver import BASIC, FAST, agent, alive, chunks, messages, run, scenario, st

PROMPT = [*BASIC, st("prompt", session="s1", text="go"), st("prompt", session="s1", text="again")]


async def test_agent_ignoring_eof_and_sigterm_is_killed_with_its_child() -> None:
    t = await run(PROMPT, "ignores_eof_and_sigterm", ladder=Ladder(eof=0.3, term=0.3, kill=2))
    assert [s.problem for s in t.steps] == [None] * 4
    (proc,) = t.processes
    assert (proc.stopped_by, proc.signal, proc.exit_code) == ("sigkill", 9, None)
    assert "stdin closed; not leaving" in proc.stderr_tail
    child = int(proc.stderr_tail.split("child pid ")[1].split()[0])
    assert not alive(child)


async def test_agent_hanging_mid_prompt_hits_the_response_timeout() -> None:
    started = time.monotonic()
    t = await run(PROMPT, "hangs_mid_prompt", timeouts={"response": 0.5})
    assert time.monotonic() - started < 5
    prompt = t.steps[2]
    assert prompt.problem == 'no response to prompt s1 "go" within the response timeout (0.5 s)'
    assert prompt.response is None
    assert chunks(t) == ["partial"]
    assert len(t.steps) == 3
    assert t.problems == ['run stopped at step 3 (prompt s1 "go"); 1 later step(s) not run']
    # Busy in its prompt handler, it never sees EOF; SIGTERM's default action ends it.
    assert (t.processes[0].stopped_by, t.processes[0].signal) == ("sigterm", 15)


async def test_crash_mid_prompt_reports_exit_code_and_stderr() -> None:
    t = await run(PROMPT, "crashes_exit3")
    prompt = t.steps[2]
    assert prompt.problem is not None
    assert prompt.problem.startswith('agent exited during prompt s1 "go" (exit code 3)')
    assert "fatal: the fixture agent crashed on purpose" in prompt.problem
    assert chunks(t) == ["about to fail"]
    (proc,) = t.processes
    assert (proc.exit_code, proc.stopped_by) == (3, "exit")
    assert proc.stderr_tail == "fatal: the fixture agent crashed on purpose\n"
    # Reported once, on the step; the run summary says where it stopped.
    assert t.problems == ['run stopped at step 3 (prompt s1 "go"); 1 later step(s) not run']


async def test_exit_is_noticed_even_when_a_child_keeps_stdout_open() -> None:
    started = time.monotonic()
    t = await run(PROMPT, "crash_leaves_child", timeouts={"response": 10})
    assert time.monotonic() - started < 5
    problem = t.steps[2].problem or ""
    assert problem.startswith('agent exited during prompt s1 "go" (exit code 4)')
    assert "leaving a child behind" in problem
    (proc,) = t.processes
    assert (proc.exit_code, proc.stopped_by) == (4, "exit")


async def test_exit_between_steps_is_reported_at_the_next_send() -> None:
    steps = [*BASIC, st("prompt", session="s1", text="exit"), st("list_sessions")]
    t = await run(steps, timeouts={"response": 0.5})
    # `exit` never answers; stdout EOF ends the prompt step, not a timeout.
    assert (t.steps[2].problem or "").startswith("agent exited during prompt")
    assert "(exit code 0)" in (t.steps[2].problem or "")


async def test_garbage_on_stdout_is_recorded_and_the_run_goes_on() -> None:
    t = await run(PROMPT, "garbage_stdout")
    assert [s.problem for s in t.steps] == [None] * 4
    assert t.steps[3].response["result"] == {"stopReason": "end_turn"}
    bad = [f for f in t.frames if f.direction == "in" and f.parse_error is not None]
    assert [f.raw for f in bad][:3] == [
        "Starting fixture agent v0.0.1...",
        "DEBUG: prompt received",
        "\udcff\udcfe not utf-8",
    ]
    # Byte-exact: the bytes that are not UTF-8 are kept (`surrogateescape`).
    assert bad[2].raw.encode("utf-8", "surrogateescape") == b"\xff\xfe not utf-8"
    assert all(f.message is None for f in bad)
    assert bad[2].parse_error is not None and bad[2].parse_error.startswith("invalid UTF-8")
    array = next(f for f in t.frames if f.raw == "[1, 2, 3]")
    assert (array.message, array.parse_error) == ([1, 2, 3], None)
    assert f"frame {bad[0].seq}: non-JSON line on stdout: invalid JSON" in t.problems[0]
    assert any("is not a JSON-RPC message" in p for p in t.problems)
    # Two prompts: 3 non-JSON lines each plus the banner, 2 stray JSON values each.
    assert len(t.problems) == 1 + 2 * 2 + 2 * 2


async def test_a_flood_of_garbage_is_capped_in_the_problems() -> None:
    t = await run(BASIC, "garbage_stdout", env={"FLOOD": "30"})
    assert sum(1 for f in t.frames if f.parse_error) == 31
    assert len(t.problems) == 21
    assert t.problems[-1] == "... and 11 more (non-JSON line)"


async def test_frames_beyond_the_limit_are_drained_not_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(recording, "MAX_FRAMES", 40)
    t = await run(BASIC, "garbage_stdout", env={"FLOOD": "100"}, timeouts={"startup": 1})
    # 101 start-up lines; 39 of them fit beside the request. The answers past the limit
    # are still recorded and acted on: the limit is its own problem, stated first, and
    # never turns into a timeout (issue 33).
    assert len(t.frames) == 40 + 3  # initialize's answer, session/new and its answer
    assert [s.problem for s in t.steps] == [None, None]
    assert t.problems[0].startswith("frame limit (40) reached: 62 later line(s)")


async def test_oversized_frame_is_cut_flagged_and_reading_continues() -> None:
    t = await run(PROMPT[:3], "oversized_frame")
    big = next(f for f in t.frames if f.oversize)
    assert len(big.raw) == OVERSIZE_HEAD
    assert big.message is None
    assert big.parse_error is not None and big.parse_error.startswith("oversize frame:")
    assert chunks(t) == ["after"]
    assert t.steps[2].response["result"] == {"stopReason": "end_turn"}
    assert t.problems == [f"frame {big.seq}: oversize frame on stdout: {big.parse_error}"]


async def test_updates_after_the_prompt_response_are_kept_in_order() -> None:
    steps = [
        *BASIC,
        st("prompt", session="s1", text="go"),
        st("wait", update="agent_message_chunk"),
        st("wait", update="session_info_update"),
    ]
    t = await run(steps, "late_updates")
    assert [s.problem for s in t.steps] == [None] * 5
    prompt, late_chunk, title = t.steps[2:]
    updates = [
        (f.seq, f.message["params"]["update"])
        for f in t.frames
        if f.message and f.message.get("method") == "session/update"
    ]
    assert [u["sessionUpdate"] for _, u in updates] == [
        "agent_message_chunk",
        "agent_message_chunk",
        "session_info_update",
    ]
    # The wait counts only updates after the prompt's response: the late chunk, not
    # the one inside the turn, even though it may have arrived before the wait began.
    response = next(
        f for f in t.frames if f.direction == "in" and f.message and f.message.get("id") == 2
    )
    assert updates[0][0] < response.seq < updates[1][0] < updates[2][0]
    assert prompt.response == response.message
    assert late_chunk.problem is None and title.problem is None


async def test_wait_for_an_update_that_never_comes_times_out() -> None:
    t = await run([*BASIC, st("wait", update="plan")], timeouts={"response": 0.3})
    assert (
        t.steps[2].problem
        == "wait update=plan: only 0 of 1 plan update(s) within the response timeout (0.3 s)"
    )


async def test_client_methods_without_capability_get_method_not_found() -> None:
    t = await run(PROMPT[:3], "fs_without_capability")
    answers = messages(t, "out")
    errors = [m for m in answers if "error" in m]
    assert [e["error"] for e in errors] == [
        {"code": -32601, "message": "Method not found", "data": {"method": "fs/read_text_file"}},
        {"code": -32601, "message": "Method not found", "data": {"method": "terminal/create"}},
    ]
    requests = messages(t, "in")
    assert [e["id"] for e in errors] == [m["id"] for m in requests if "method" in m and "id" in m]
    assert t.problems == [
        "agent called fs/read_text_file without the client capability",
        "agent called terminal/create without the client capability",
    ]


async def test_startup_timeout_when_the_agent_never_answers_initialize() -> None:
    t = await run_scenario(
        scenario(BASIC, timeouts={"startup": 0.3}),
        lambda paths: Launch(["sleep", "30"], {}),
        llm_run=None,
        run_id="startup",
        target="sleep",
        ladder=FAST,
    )
    assert t.steps[0].problem == "no response to initialize within the startup timeout (0.3 s)"
    assert (t.processes[0].stopped_by, t.processes[0].signal) == ("sigterm", 15)
    assert group_members(t.processes[0].pid) == []


async def test_startup_timeout_applies_only_to_an_initialize_sent_first() -> None:
    steps = [st("wait", ms=400), st("initialize"), st("new_session", as_="s1")]
    t = await run(steps, timeouts={"startup": 0.3, "response": 5})
    assert [s.problem for s in t.steps] == [None, None, None]
    t = await run([st("notify", method="x/hello"), st("initialize")], timeouts={"startup": 0.01})
    assert t.steps[1].problem is None


async def test_an_agent_not_reading_stdin_cannot_block_a_step_forever() -> None:
    big = '{"jsonrpc":"2.0","method":"x/big","params":"' + "x" * 1_000_000 + '"}'
    t = await run_scenario(
        scenario([st("send_raw", line=big), st("initialize")], timeouts={"response": 0.3}),
        lambda paths: Launch(["sleep", "30"], {}),
        llm_run=None,
        run_id="stuck",
        target="sleep",
        ladder=FAST,
    )
    assert t.steps[0].problem == (
        "could not send send_raw within the response timeout (0.3 s): "
        "the agent is not reading its stdin"
    )
    assert len(t.steps) == 1
    assert group_members(t.processes[0].pid) == []


async def test_missing_binary_is_a_clear_problem() -> None:
    t = await run_scenario(
        scenario(BASIC),
        lambda paths: Launch(["/nonexistent/agent-binary"], {}),
        llm_run=None,
        run_id="missing",
        target="missing",
    )
    assert t.steps == [] and t.processes == []
    assert t.problems[0].startswith("cannot start target '/nonexistent/agent-binary':")
    assert "No such file or directory" in t.problems[0]


async def test_run_timeout_inside_parallel_counts_scenario_steps() -> None:
    hang = st("prompt", session="s1", text="go")
    block = st("parallel", {"steps": [hang, st("wait", ms=5)]})
    t = await run(
        [*BASIC, st("wait", ms=1), block, st("list_sessions")],
        "hangs_mid_prompt",
        timeouts={"run": 0.8, "response": 30},
    )
    assert [s.kind for s in t.steps] == [
        "initialize",
        "new_session",
        "wait",
        "parallel",
        "prompt",
        "wait",
    ]
    assert t.steps[4].problem == 'run timeout (0.8 s) reached during prompt s1 "go"'
    assert t.steps[3].problem == "run timeout (0.8 s) reached during parallel"
    assert t.steps[5].problem is None
    assert t.problems[-1] == "run stopped at step 4 (parallel); 1 later step(s) not run"


async def test_run_timeout_names_the_step_it_interrupted() -> None:
    t = await run(PROMPT, "hangs_mid_prompt", timeouts={"run": 0.6, "response": 30})
    assert t.steps[2].problem == 'run timeout (0.6 s) reached during prompt s1 "go"'
    assert t.problems[0] == "run timeout (0.6 s) reached"
    assert t.problems[1] == 'run stopped at step 3 (prompt s1 "go"); 1 later step(s) not run'


async def test_cancelling_the_harness_still_tears_the_agent_down() -> None:
    seen: list[RunPaths] = []

    def launch(paths: RunPaths) -> Launch:
        seen.append(paths)
        return agent("ignores_eof_and_sigterm")(paths)

    steps = [*BASIC, st("wait", ms=60_000)]
    task = asyncio.ensure_future(
        run_scenario(
            scenario(steps), launch, llm_run=None, run_id="cancel", target="x", ladder=FAST
        )
    )
    await asyncio.sleep(0.5)
    started = _running_in(seen[0].workdir)
    assert len(started) == 2  # the agent and the child it left in its group
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not any(alive(pid) for pid in started)
    wait_for_cleanup()
    assert not seen[0].root.exists()


def _running_in(workdir: Path) -> list[int]:
    """Pids of live processes whose current directory is `workdir`."""
    pids = []
    for p in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if p.name.isdigit() and os.readlink(p / "cwd") == str(workdir) and alive(int(p.name)):
                pids.append(int(p.name))
    return pids


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


KEYBOARD_INTERRUPT = """
import asyncio, sys
sys.path.insert(0, {root!r})
from tests.support.driver import BASIC, agent, scenario, st
from parity.driver.run import run_scenario
steps = [*BASIC, st("prompt", session="s1", text="go")]
asyncio.run(run_scenario(scenario(steps), agent("hangs_mid_prompt"), llm_run=None,
                         run_id="kbd", target="x"))
"""


def test_keyboard_interrupt_leaves_no_agent_behind(tmp_path: Path) -> None:
    import subprocess

    root = str(Path(__file__).resolve().parents[2])
    harness = subprocess.Popen(
        [sys.executable, "-c", KEYBOARD_INTERRUPT.format(root=root)],
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    agent_pid = None
    deadline = time.monotonic() + 10
    while agent_pid is None and time.monotonic() < deadline:
        time.sleep(0.05)
        for p in Path("/proc").iterdir():
            pid = int(p.name) if p.name.isdigit() else 0
            if pid and _cmdline(pid).endswith("hangs_mid_prompt.py") and _ppid(pid) == harness.pid:
                agent_pid = pid
    assert agent_pid is not None
    time.sleep(0.3)  # let the prompt be in flight
    harness.send_signal(signal.SIGINT)
    _, err = harness.communicate(timeout=20)
    assert b"KeyboardInterrupt" in err
    assert not alive(agent_pid)
    assert group_members(agent_pid) == []


def _ppid(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return 0
    return int(stat[stat.rfind(b")") + 2 :].split()[1])
