"""acp-plus's `workflow` tool: the guest Node process and its host, with stand-in child
agents (a fake `Children`: the engine's side of children, crashes and limits no scenario
can script), cancellation, the sandbox the script's process runs in, and the children's
labels and the cancelled text the tool gives the subagent service and the model.

What native shows (the definition, the checks before a run, the hooks' errors, the
rendering, real children through the subagent service) is compared live by
scenarios/tools/workflow-*.yaml.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from acp_plus.core.tools.base import ToolContext
from acp_plus.core.tools.job_table import JobTable
from acp_plus.core.tools.workflow_engine import GUEST_MARK, Limits, RunResult, run_workflow
from acp_plus.core.tools.workflow_family import CANCELLED, SessionChildren, WorkflowTool
from acp_plus.core.tools.workflow_text import render_completed

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="the workflow guest needs node on PATH")


class _Child:
    def __init__(self, id: str, result: dict[str, Any] | None, gate: asyncio.Event) -> None:
        self.id = id
        self._result = result
        self._gate = gate
        self.disposed = False

    async def result(self) -> dict[str, Any]:
        await self._gate.wait()
        if self._result is None:
            raise RuntimeError("the child crashed")
        return self._result

    async def dispose(self) -> None:
        self.disposed = True


class _Children:
    """Children answering by prompt: `text:X`, `json:{...}`, `fail`, `crash`, `refuse`."""

    def __init__(self, hold: bool = False, slow: bool = False) -> None:
        self.slow = slow
        self.started: list[_Child] = []
        self.running = 0
        self.most = 0
        self.gate = asyncio.Event()
        if not hold:
            self.gate.set()

    async def start(self, request: dict[str, Any]) -> _Child:
        prompt = request["prompt"]
        if prompt == "refuse":
            raise RuntimeError("no provider")
        result: dict[str, Any] | None
        if prompt.startswith("text:"):
            result = {"output": [{"type": "text", "text": prompt[5:]}], "stopReason": "completed"}
        elif prompt.startswith("json:"):
            result = {"output": [], "stopReason": "completed", "structured": {"v": prompt[5:]}}
        elif prompt == "fail":
            result = {"output": [], "stopReason": "error"}
        else:
            result = None
        child = _Child(f"child-{len(self.started) + 1}", result, self.gate)
        self.started.append(child)
        self.running += 1
        self.most = max(self.most, self.running)
        original = child.result

        async def counted() -> dict[str, Any]:
            try:
                if self.slow:
                    await asyncio.sleep(0.05)  # long enough for the others to start
                return await original()
            finally:
                self.running -= 1

        child.result = counted  # type: ignore[method-assign]
        return child


async def _run(
    body: str, children: _Children, limits: Limits | None = None, **kw: Any
) -> tuple[RunResult, list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    assert NODE is not None
    run = run_workflow(
        node=NODE,
        prefix=[],
        cwd=Path.cwd(),
        meta={"name": "t", "description": "test"},
        body=body,
        args=kw.get("args"),
        limits=limits or Limits(max_concurrent_agents=4),
        children=children,
        progress=events.append,
    )
    result = await asyncio.wait_for(run, 30)  # a lost answer hangs the guest: fail instead
    return result, events


async def test_agent_results_text_structured_and_failed_children() -> None:
    children = _Children()
    script = (
        "phase('fan')\n"
        "return await parallel([() => agent('text:hi'), () => agent('json:x', {schema: "
        "{type: 'object'}, label: 'structured'}), () => agent('fail'), () => agent('json:y')])"
    )
    result, events = await _run(script, children)
    assert result.stop_reason == "completed" and result.agents_started == 4
    assert result.rendered is not None
    text = render_completed("t", 4, result.rendered)
    assert text.endswith('[\n  "hi",\n  {\n    "v": "x"\n  },\n  null,\n  ""\n]')
    starts = [e["info"] for e in events if e["type"] == "agent-start"]
    assert [s["label"] for s in starts] == ["text:hi", "structured", "fail", "json:y"]
    assert {s["phase"] for s in starts} == {"fan"}
    ends = {e["info"]["seq"]: e["info"]["outcome"] for e in events if e["type"] == "agent-end"}
    assert ends == {1: "completed", 2: "completed", 3: "failed", 4: "completed"}
    assert all(child.disposed for child in children.started)


async def test_a_child_that_cannot_start_or_crashes_ends_the_script() -> None:
    for prompt, expected in [
        ("refuse", "agent() could not start a child: Error: no provider"),
        ("crash", "child agent run failed: Error: the child crashed"),
    ]:
        result, _ = await _run(f"return await parallel([() => agent('{prompt}')])", _Children())
        assert result.stop_reason == "error"
        assert result.error is not None and result.error.startswith(f"WorkflowError: {expected}")


async def test_children_run_at_most_the_concurrency_limit() -> None:
    children = _Children(slow=True)
    script = "return await parallel([1,2,3,4,5,6].map((n) => () => agent('text:' + n)))"
    result, _ = await _run(script, children, Limits(max_concurrent_agents=2))
    assert result.agents_started == 6 and children.most == 2


async def test_the_total_agent_cap_ends_the_script() -> None:
    script = "for (let i = 0; i < 5; i++) await agent('text:x')\nreturn 1"
    result, _ = await _run(script, _Children(), Limits(2, max_total_agents=3))
    assert result.stop_reason == "error" and result.agents_started == 3
    assert result.error is not None and "total agent cap (3)" in result.error


async def test_a_script_busy_past_the_sync_limit_is_stopped() -> None:
    result, _ = await _run("while (true) {}", _Children(), Limits(1, sync_timeout_ms=200))
    assert result.stop_reason == "error"
    assert result.error is not None and "Script execution timed out after 200ms" in result.error


def _guests() -> list[int]:
    """This process's guests (another test worker may be running a workflow of its own)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                parent = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[1]
            except OSError:
                continue
            if int(parent) == os.getpid() and GUEST_MARK.encode() in cmdline.split(b"\0"):
                found.append(int(pid))
    return found


async def test_cancelling_the_call_ends_the_process_and_disposes_its_children() -> None:
    children = _Children(hold=True)
    task = asyncio.create_task(_run("await agent('text:never')\nreturn 1", children))
    for _ in range(200):
        if children.started:
            break
        await asyncio.sleep(0.02)
    assert children.started and _guests()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert children.started[0].disposed
    assert _guests() == []


async def test_a_killed_background_run_stops_its_child_and_says_only_killed(
    tmp_path: Path,
) -> None:
    """Native's `[status: killed]`, without bash's `killed before exit`
    (scenarios/tools/workflow-agent-kill compares the whole path)."""
    children, jobs = _Children(hold=True), JobTable()
    tool = WorkflowTool(children=children, jobs=jobs)
    script = "return await agent('text:never')"
    meta = {"name": "slow", "description": "d"}
    args = {"meta": meta, "script": script, "run_in_background": True}
    await tool.run(args, _ctx(tmp_path, "danger-full-access"))
    [job] = jobs.list("s")
    for _ in range(200):
        if children.started:
            break
        await asyncio.sleep(0.02)
    assert children.started
    jobs.kill(job, None, by_model=True)
    await asyncio.wait_for(job.settled.wait(), 10)
    assert (job.status, job.detail) == ("killed", None)
    assert children.started[0].disposed


def _ctx(tmp_path: Path, sandbox: Any = "workspace-write") -> ToolContext:
    return ToolContext(session_id="s", cwd=tmp_path, call_id="c", turn=1, sandbox=sandbox)


ESCAPE = (
    "const proc = this.constructor.constructor('return process')()\n"
    "const fs = proc.getBuiltinModule('node:fs')\n"
    "const tried = {}\n"
    "for (const [key, path] of Object.entries(args)) {\n"
    "  try { fs.writeFileSync(path, 'x'); tried[key] = 'written' } "
    "catch (e) { tried[key] = e.code }\n"
    "}\n"
    "return {tried, env: Object.keys(proc.env).sort()}"
)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap confines the guest")
async def test_a_script_escaping_the_vm_is_held_by_the_sandbox(tmp_path: Path) -> None:
    """vm is no security boundary: a script reaches `process` in one line. The guest's
    process is what holds it: writes land only in the workspace, and it sees no
    environment but PATH (the agent's provider keys stay out)."""
    workspace = tmp_path / "ws"
    # Outside the workspace and outside /tmp (the sandbox's /tmp is a private tmpfs, and
    # the checkout itself may be under /tmp): the home, read-only in the sandbox.
    outside = Path.home() / f".acp-plus-workflow-escape-{os.getpid()}.txt"
    if outside.resolve().is_relative_to(Path("/tmp").resolve()):
        pytest.skip("home is under /tmp: no path outside both the workspace and /tmp")
    workspace.mkdir()
    tool = WorkflowTool()
    args = {"inside": str(workspace / "in.txt"), "outside": str(outside)}
    out = await tool.run(
        {"meta": {"name": "escape", "description": "d"}, "script": ESCAPE, "args": args},
        _ctx(workspace),
    )
    assert not out.is_error, out.content
    text = out.content[0]["text"]
    assert '"inside": "written"' in text and '"outside": "EROFS"' in text
    assert not outside.exists() and (workspace / "in.txt").exists()
    env = text.split('"env": [')[1].split("]")[0]
    assert {name.strip().strip('"') for name in env.split(",")} <= {"PATH", "PWD"}


async def test_agent_outside_a_hosting_session_fails_as_a_child_that_cannot_start(
    tmp_path: Path,
) -> None:
    """The children are the subagent service's: a session it does not host (no live
    session registered it) gets the service's refusal as the script's error."""
    tool = WorkflowTool()
    out = await tool.run(
        {"meta": {"name": "fan", "description": "d"}, "script": "return await agent('go')"},
        _ctx(tmp_path, "danger-full-access"),
    )
    assert out.is_error
    assert out.content[0]["text"].startswith(
        "Error: workflow run failed: WorkflowError: agent() could not start a child: "
        "Error: subagent tool requires a calling agent"
    )


class _Service:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    async def start_for_caller(self, *args: Any) -> str:
        self.calls.append(args)
        return "run"


async def test_each_agent_call_starts_a_child_of_the_calling_session_labelled_by_the_run() -> None:
    """Native's label, `<workflow> child <n>` (list_agents shows it), the schema and the
    route options."""
    service = _Service()
    children = SessionChildren(service, "s-1", "flow")  # type: ignore[arg-type]
    await children.start({"prompt": "a"})
    await children.start({"prompt": "b", "schema": {"type": "object"}, "model": "m"})
    assert service.calls == [
        ("s-1", "flow child 1", "a", None, None, None),
        ("s-1", "flow child 2", "b", {"type": "object"}, None, "m"),
    ]


def test_a_cancelled_run_reads_as_natives() -> None:
    snapshot = Path(__file__).parents[4] / "snapshots/tools/workflow-agent-cancel/native.yaml"
    text = snapshot.read_text()
    assert f"text: '{CANCELLED}'" in text
    assert WorkflowTool().cancelled_text == CANCELLED


def test_a_long_value_is_cut_in_utf16_units_with_the_count_cut() -> None:
    rendered = '"' + "\U0001f600" * 10 + '"'  # 22 UTF-16 units
    text = render_completed("n", 1, rendered, cap=5)
    assert text == (
        'workflow "n" completed (1 agent).\nReturn value:\n"\U0001f600\U0001f600'
        "\n\u2026 [truncated: 17 more characters]"
    )
