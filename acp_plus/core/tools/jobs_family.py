"""The background-job family as native mounts it: `job_output`, `job_list`, `job_kill`
over the `JobTable` that `bash` starts its jobs in, and the system-prompt paragraph.

The completion notice a session gets when a job settles unobserved is the table's
(`job_table.completion_notice`); the session decides where it lands (`Agent.notify`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from acp_plus.core.js_json import js_json
from acp_plus.core.tools.answering import AnsweringTool
from acp_plus.core.tools.base import Tool, ToolContext
from acp_plus.core.tools.job_table import JobError, JobTable, status_line

JOBS_GUIDANCE: tuple[str, ...] = (
    "Track every background job id you start. You are notified in-session when a job "
    "finishes \u2014 do not busy-poll or sleep on one; keep working on independent steps and "
    "do not duplicate a running job's work. Before giving a final answer, collect every "
    "still-relevant job with job_output (set wait: true only when you are genuinely blocked "
    "on it), and job_kill jobs that stopped mattering.",
)
"""The system-prompt paragraphs native adds with the job tools (its `tool:jobs` section)."""

WAIT_DEFAULT_MS = 30_000
WAIT_CAP_MS = 600_000

_JOB_ID = {
    "type": "string",
    "description": "Job id returned by the tool that started the background work.",
}


class _JobTool(AnsweringTool):
    """What the three share: the table; a job error is the call's error."""

    refusals = (JobError,)

    def __init__(self, jobs: JobTable) -> None:
        self.jobs = jobs

    def precheck(self, args: dict[str, Any]) -> str | None:
        job_id = args.get("job_id")
        if isinstance(job_id, str) and not job_id:
            # Native renders the value with JSON.stringify: `got ""`.
            return f"invalid job_id: expected a non-empty string, got {js_json(job_id)}"
        return None


class JobOutputTool(_JobTool):
    """Read what a job wrote since the last read, optionally waiting for it to finish."""

    name = "job_output"
    cancelled_text = "Error: wait aborted"  # native's wait throws this on the abort
    description = (
        "Read a background job: output since the previous read for stream jobs, or the "
        "result of a finished final-output job."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "job_id": _JOB_ID,
            "wait": {
                "type": "boolean",
                "description": "Block until the job finishes or the timeout expires; a "
                "timed-out wait leaves the job running. Defaults to false.",
            },
            "timeout_ms": {
                "type": "number",
                "description": "Max wait in milliseconds with wait: true. Defaults to and is "
                "capped by configuration.",
            },
        },
        "required": ["job_id"],
    }

    async def answer(self, args: dict[str, Any], ctx: ToolContext) -> str:
        job = self.jobs.get(args["job_id"], ctx.session_id)
        if args.get("wait") is True:
            wanted = args.get("timeout_ms")
            timeout = min(WAIT_DEFAULT_MS if wanted is None else float(wanted), WAIT_CAP_MS)
            if timeout <= 0:
                raise JobError(
                    "invalid wait timeout: expected a positive number of milliseconds, "
                    f"got {wanted}"
                )
            await self.jobs.wait(job, timeout / 1000)
        body = self.jobs.read(job) or "(no new output)"
        return body + ("" if body.endswith("\n") else "\n") + status_line(job)


class JobListTool(_JobTool):
    """The session's jobs, running and finished."""

    name = "job_list"
    description = (
        "List your background jobs (running and finished) with their ids, kinds, and statuses."
    )
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def answer(self, args: dict[str, Any], ctx: ToolContext) -> str:
        jobs = self.jobs.list(ctx.session_id)
        if not jobs:
            return "(no background jobs)"
        return "\n".join(f"{j.id} [{j.kind}] {j.status} \u2014 {j.label}" for j in jobs)


class JobKillTool(_JobTool):
    """Ask a running job to stop."""

    name = "job_kill"
    description = "Request cancellation of a running background job."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "job_id": _JOB_ID,
            "reason": {
                "type": "string",
                "description": "Optional short reason, recorded in the log and forwarded to "
                "the job.",
            },
        },
        "required": ["job_id"],
    }

    async def answer(self, args: dict[str, Any], ctx: ToolContext) -> str:
        job = self.jobs.get(args["job_id"], ctx.session_id)
        if not self.jobs.kill(job, args.get("reason"), by_model=True):
            return f"job {job.id} had already finished {status_line(job)}"
        return f"requested cancellation of job {job.id}"


def job_tools(jobs: JobTable) -> list[Tool]:
    """The family's tools over `jobs`, in native's registration order."""
    return [JobOutputTool(jobs), JobListTool(jobs), JobKillTool(jobs)]


__all__ = [
    "JOBS_GUIDANCE",
    "JobKillTool",
    "JobListTool",
    "JobOutputTool",
    "job_tools",
]
