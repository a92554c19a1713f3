"""The `workflow` family as native mounts it: one tool that runs a model-written
JavaScript script orchestrating child agents, and the paragraph the system prompt
carries for it (`workflow_text.py` holds the words).

A call is checked as native checks it (arguments, then `run_in_background`, then the
meta block and a meta statement left in the body), then the script runs in the guest
Node process (`workflow_engine.py`), confined like a `bash` command of the session's
standing sandbox mode: the script has no file APIs, but the vm it runs in is no
security boundary, so the process is what holds it.

Child agents come from the subagent service (`core/subagents.py`), as native's engine
starts them: a child of the calling session per `agent()` call, labelled
`<workflow> child <n>`, whose result the script awaits (`SessionChildren`); a test may
give stand-in `children` instead (`workflow_engine.Children`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from acp_plus.core.caller_runs import CallerRun
from acp_plus.core.confine import Profile, bwrap_args, hidden_paths, landlock_args
from acp_plus.core.subagents import Subagents
from acp_plus.core.tools.arg_check import arguments_error
from acp_plus.core.tools.backend import Backend, find_backend
from acp_plus.core.tools.base import Tool, ToolContext, ToolResult
from acp_plus.core.tools.job_table import Job, JobError, JobTable, Outcome
from acp_plus.core.tools.workflow_engine import (
    Children,
    Limits,
    ParseError,
    RunResult,
    run_workflow,
)
from acp_plus.core.tools.workflow_text import (
    DESCRIPTION,
    NO_JOBS,
    PARAMETERS,
    call_problem,
    render_completed,
    render_failure,
)

NO_NODE = "workflow runtime unavailable: node was not found on PATH"
CANCELLED = "Error: workflow run was cancelled (workflow run cancelled: workflow signal aborted)"
"""Native's result for a run whose call was cancelled (the turn's abort reached it)."""


class SessionChildren:
    """One run's children from the subagent service: each a child of the calling session
    (native's `startActivation` with `delivery: "caller"`), numbered by the run."""

    def __init__(self, agents: Subagents, session_id: str, name: str) -> None:
        self.agents = agents
        self.session_id = session_id
        self.name = name
        self.started = 0

    async def start(self, request: dict[str, Any]) -> CallerRun:
        """Start the next child on `{prompt, schema?, provider?, model?}` (the service's
        refusal is the script's `agent() could not start a child` error)."""
        self.started += 1
        label = f"{self.name} child {self.started}"
        prompt, schema = str(request["prompt"]), request.get("schema")
        route = (request.get("provider"), request.get("model"))
        return await self.agents.start_for_caller(self.session_id, label, prompt, schema, *route)


def _error(text: str) -> ToolResult:
    return ToolResult.text(f"Error: {text}", is_error=True)


def _agents(count: int) -> str:
    return f"{count} agent{'' if count == 1 else 's'}"


class WorkflowTool:
    """Run a workflow script, in the foreground or (beside the job tools, which give it
    `jobs`) as a background job."""

    name = "workflow"
    description = DESCRIPTION
    parameters = PARAMETERS
    cancelled_text = CANCELLED

    def __init__(
        self,
        homes: Sequence[Path] = (),
        *,
        agents: Subagents | None = None,
        children: Children | None = None,
        jobs: JobTable | None = None,
        find: Callable[[], Backend | None] = find_backend,
        limits: Limits | None = None,
    ) -> None:
        self.homes = tuple(home.resolve(strict=False) for home in homes)
        self.agents = agents or Subagents()
        self.children = children
        self.jobs = jobs
        self.find = find
        self.limits = limits or Limits.for_machine()

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Nothing to ask: the children it starts ask for what they do."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Check the call, run the script, render its outcome."""
        problem = arguments_error(PARAMETERS, args)
        if problem is not None:
            return _error(problem)
        background = args.get("run_in_background") is True
        if background and self.jobs is None:
            return _error(NO_JOBS)
        problem = call_problem(args)
        if problem is not None:
            return _error(problem)
        name = str(args["meta"]["name"])
        if background:
            assert self.jobs is not None
            return await self._start_job(self.jobs, name, args, ctx)
        try:
            result = await self._run(args, ctx)
        except ParseError as exc:
            return _error(str(exc))
        if result.stop_reason != "completed" or result.rendered is None:
            return _error(render_failure(result.stop_reason, result.error))
        return ToolResult.text(render_completed(name, result.agents_started, result.rendered))

    async def _start_job(
        self, jobs: JobTable, name: str, args: dict[str, Any], ctx: ToolContext
    ) -> ToolResult:
        """Native's background run: a `workflow` job whose output, once it settles, is
        the rendered return value (the run's failure is its status detail); the call
        answers once the body compiles, and a body that does not is the call's error."""
        parsed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def work(job: Job) -> Outcome:
            try:
                result = await self._run(args, ctx, parsed)
            except asyncio.CancelledError:
                return Outcome("killed")  # native's killed run says no more (not bash's words)
            if result.stop_reason == "completed" and result.rendered is not None:
                text = render_completed(name, result.agents_started, result.rendered)
                jobs.append(job, "stdout", text)
                return Outcome("completed", _agents(result.agents_started))
            return Outcome("failed", result.error or "unknown error")

        try:
            job = jobs.start("workflow", name, ctx.session_id, work)
        except JobError as exc:
            return _error(str(exc))
        settled: asyncio.Future[Any] = asyncio.ensure_future(job.settled.wait())
        waited: list[asyncio.Future[Any]] = [parsed, settled]
        try:
            await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        finally:
            settled.cancel()
        if parsed.done() and parsed.exception() is not None:
            jobs.remove(job)  # native refuses the call before any job exists
            return _error(str(parsed.exception()))
        return ToolResult.text(
            f'workflow "{name}" started in the background as job {job.id}. Its return value '
            "arrives with the completion notice; check on it with job_output, stop it with "
            "job_kill."
        )

    async def _run(
        self,
        args: dict[str, Any],
        ctx: ToolContext,
        parsed: asyncio.Future[None] | None = None,
    ) -> RunResult:
        """The script in its confined guest, to its end (`ParseError`: it never ran)."""
        name = str(args["meta"]["name"])
        node = shutil.which("node")
        if node is None:
            return RunResult("error", 0, error=NO_NODE)
        tmpdir: Path | None = None
        try:
            prefix, tmpdir = await self._confinement(ctx)
            if prefix is None:
                return RunResult("error", 0, error=self._unenforceable(ctx))
            return await run_workflow(
                node=node,
                prefix=prefix,
                cwd=ctx.cwd,
                meta=args["meta"],
                body=str(args["script"]),
                args=args.get("args"),
                limits=self.limits,
                children=self.children or SessionChildren(self.agents, ctx.session_id, name),
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                parsed=parsed,
            )
        finally:
            if tmpdir is not None:
                shutil.rmtree(tmpdir, ignore_errors=True)

    @staticmethod
    def _unenforceable(ctx: ToolContext) -> str:
        return f"workflow runtime cannot enforce the {ctx.sandbox} file policy"

    async def _confinement(self, ctx: ToolContext) -> tuple[list[str] | None, Path | None]:
        """The sandbox prefix for the guest in the standing mode (none under
        danger-full-access), or None where no backend can enforce it."""
        if ctx.sandbox == "danger-full-access":
            return [], None
        backend = await asyncio.to_thread(self.find)
        if backend is None:
            return None, None
        workspace = ctx.cwd.resolve(strict=False)
        hidden = hidden_paths([home for home in self.homes if home.is_dir()], workspace)
        profile = Profile(ctx.sandbox, workspace, hidden, backend.userns, workspace)
        if backend.kind == "bwrap":
            return [backend.executable, *bwrap_args(profile)], None
        tmpdir = Path(tempfile.mkdtemp(prefix="acp-plus-workflow-"))
        return [*backend.prefix(), *landlock_args(profile, tmpdir)], tmpdir


def workflow_tools(
    homes: Sequence[Path] = (), jobs: JobTable | None = None, agents: Subagents | None = None
) -> list[Tool]:
    """The family's tools: `workflow`, its children from `agents` (the process's subagent
    service), in the background only given `jobs` (the job tools' table: native's
    background runs come with the job tools)."""
    return [WorkflowTool(homes, agents=agents, jobs=jobs)]


__all__ = ["CANCELLED", "SessionChildren", "WorkflowTool", "workflow_tools"]
