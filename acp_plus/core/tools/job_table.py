"""The background jobs of a process: native's job registry, shared by `bash` (which
starts jobs) and the job tools (which read, list and stop them).

A job belongs to the session that started it; another session cannot see it (native's
words: `job X belongs to another session`). Its output is kept as chunks per channel
(stdout, stderr), read by the model from a cursor, so each `job_output` shows what is new.
When a job settles and nobody was waiting on it (a `job_output` with `wait`, or the
foreground `bash` call it came from), nobody killed it on the model's account, and the
call did not take it back, its session gets native's completion notice through the
listener the session registered (`listen`).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

JobStatus = Literal["running", "stopping", "completed", "killed", "failed"]
TERMINAL: frozenset[str] = frozenset({"completed", "killed", "failed"})
MAX_JOBS_PER_OWNER = 10
RETAIN_BYTES = 256 * 1024
"""Bytes of a running job's output kept in memory (native's live ring): older chunks
go, read or not; a read that lost unread output says so and names the full output."""
SETTLED_RETAIN = 16 * 1024
"""Bytes of a settled job's output kept for later reads (native's settled ring)."""
DROPPED = "[some output was dropped from memory; full output: {paths}]"


@dataclass(frozen=True)
class Outcome:
    """How a job's work ended: `completed` (detail: `exit code: N`) or `killed`."""

    status: JobStatus
    detail: str | None = None


@dataclass
class Job:
    """One background job; mutated only by its `JobTable`."""

    id: str
    kind: str
    label: str
    owner: str
    started_at: int
    status: JobStatus = "running"
    detail: str | None = None
    finished_at: int | None = None
    chunks: list[tuple[str, str]] = field(default_factory=list)
    """(channel, text) in the order produced; channel `stdout` or `stderr`."""
    cursor: int = 0
    """How many chunks the model has read."""
    retained: int = 0
    """The UTF-8 bytes of `chunks`."""
    lost: bool = False
    """Output the model had not read was dropped (the ring's cap) since its last read."""
    spill_paths: Callable[[], list[str]] = lambda: []
    """The files holding each stream's full output, once it has one (bash's)."""
    waiters: int = 0
    kill_reason: str | None = None
    killed_by_model: bool = False
    removed: bool = False
    cancel: Callable[[], None] = lambda: None
    settled: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def done(self) -> bool:
        return self.status in TERMINAL


class JobError(Exception):
    """A job-tool failure in native's words (`unknown job X`, ...)."""


Notice = Callable[[str, str], None]
"""A session's listener: (owner session id, notice text)."""


class JobTable:
    """Every background job, by id; one per agent process."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._listeners: dict[str, Notice] = {}

    def listen(self, owner: str, listener: Notice) -> None:
        """Deliver completion notices of `owner`'s jobs to `listener`."""
        self._listeners[owner] = listener

    def start(
        self,
        kind: str,
        label: str,
        owner: str,
        work: Callable[[Job], Awaitable[Outcome]],
    ) -> Job:
        """Register a job and start `work` on it; native's per-owner limit applies."""
        active = sum(1 for j in self._jobs.values() if j.owner == owner and not j.done)
        if active >= MAX_JOBS_PER_OWNER:
            raise JobError(
                f"background job limit reached for this owner (limit: {MAX_JOBS_PER_OWNER}); "
                "use job_kill to stop an unneeded job, wait for it to finish, then retry"
            )
        job_id = f"{kind}-{secrets.token_hex(8)}"
        job = Job(job_id, kind, label, owner, int(time.time() * 1000))
        self._jobs[job_id] = job
        task = asyncio.ensure_future(self._run(job, work))

        def cancel() -> None:
            task.cancel()

        job.cancel = cancel
        return job

    async def _run(self, job: Job, work: Callable[[Job], Awaitable[Outcome]]) -> None:
        try:
            outcome = await work(job)
        except asyncio.CancelledError:
            outcome = Outcome("killed", "killed before exit")
        except Exception as exc:
            outcome = Outcome("failed", str(exc))
        self._settle(job, outcome)

    def _settle(self, job: Job, outcome: Outcome) -> None:
        job.status = outcome.status
        detail = outcome.detail
        if outcome.status == "killed" and job.kill_reason is not None:
            detail = f"{detail}; {job.kill_reason}" if detail else job.kill_reason
        job.detail = detail
        job.finished_at = int(time.time() * 1000)
        awaited = job.waiters > 0
        job.settled.set()
        if awaited or job.killed_by_model or job.removed:
            return
        listener = self._listeners.get(job.owner)
        if listener is not None:
            listener(job.owner, completion_notice(job))

    def append(self, job: Job, channel: str, text: str) -> None:
        """Output the job produced, kept within `RETAIN_BYTES` as native's ring keeps it:
        the oldest chunks go first; a lone chunk over the cap keeps its tail."""
        if not text or job.done:
            return
        job.chunks.append((channel, text))
        job.retained += len(text.encode("utf-8", "surrogatepass"))
        while job.retained > RETAIN_BYTES and len(job.chunks) > 1:
            _, dropped = job.chunks.pop(0)
            job.retained -= len(dropped.encode("utf-8", "surrogatepass"))
            if job.cursor > 0:
                job.cursor -= 1
            else:
                job.lost = True
        if job.retained > RETAIN_BYTES:
            channel, only = job.chunks[0]
            raw = only.encode("utf-8", "surrogatepass")[-RETAIN_BYTES:]
            start = 0
            while start < len(raw) and raw[start] & 0xC0 == 0x80:
                start += 1  # the tail never starts inside a character
            job.chunks[0] = (channel, raw[start:].decode("utf-8", "surrogatepass"))
            job.retained = len(raw) - start
            job.lost = job.lost or job.cursor == 0

    def get(self, job_id: str, owner: str) -> Job:
        """The job, if `owner` may see it."""
        job = self._jobs.get(job_id)
        if job is None or job.removed:
            raise JobError(f"unknown job {job_id}")
        if job.owner != owner:
            raise JobError(f"job {job_id} belongs to another session")
        return job

    def list(self, owner: str) -> list[Job]:
        """The owner's jobs, oldest first."""
        return [j for j in self._jobs.values() if j.owner == owner and not j.removed]

    def read(self, job: Job) -> str:
        """What is new since the model's last read: stdout, then one `[stderr]` section,
        then native's notice when output it had not read was dropped."""
        fresh = job.chunks[job.cursor :]
        job.cursor = len(job.chunks)
        lost, job.lost = job.lost, False
        out = "".join(text for channel, text in fresh if channel != "stderr")
        err = "".join(text for channel, text in fresh if channel == "stderr")
        if job.done:
            _trim(job)
        body = out
        if err:
            body += ("\n" if out and not out.endswith("\n") else "") + f"[stderr]\n{err}"
        if not lost:
            return body
        notice = DROPPED.format(paths=", ".join(job.spill_paths()) or "(unavailable)")
        return body + ("\n" if body and not body.endswith("\n") else "") + notice

    def kill(self, job: Job, reason: str | None, by_model: bool) -> bool:
        """Ask the job to stop; False when it had already finished."""
        if job.done:
            return False
        job.status = "stopping"
        if reason is not None:
            job.kill_reason = reason
        job.killed_by_model = job.killed_by_model or by_model
        job.cancel()
        return True

    async def wait(self, job: Job, timeout: float) -> None:
        """Wait until the job settles or `timeout` seconds pass (the job keeps running)."""
        if job.done:
            return
        job.waiters += 1
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(job.settled.wait(), timeout)
        finally:
            job.waiters -= 1

    def remove(self, job: Job) -> None:
        """Forget a job whose result its own call carries (a foreground `bash`)."""
        job.removed = True
        self._jobs.pop(job.id, None)

    async def close(self, owner: str) -> None:
        """Stop the owner's running jobs, without notices (the session is going away)."""
        self._listeners.pop(owner, None)
        running = [j for j in self._jobs.values() if j.owner == owner and not j.done]
        for job in running:
            job.removed = True
            job.cancel()
        for job in running:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(job.settled.wait(), 5.0)


def _trim(job: Job) -> None:
    # A settled job keeps only its last SETTLED_RETAIN bytes of unread history.
    kept, size = [], 0
    for chunk in reversed(job.chunks[: job.cursor]):
        size += len(chunk[1].encode())
        if size > SETTLED_RETAIN:
            break
        kept.append(chunk)
    job.chunks = [*reversed(kept), *job.chunks[job.cursor :]]
    job.cursor = len(kept)
    job.retained = sum(len(text.encode("utf-8", "surrogatepass")) for _, text in job.chunks)


def status_line(job: Job) -> str:
    """`[status: S]` or `[status: S, detail]`."""
    return f"[status: {job.status}, {job.detail}]" if job.detail else f"[status: {job.status}]"


def completion_notice(job: Job) -> str:
    """The message a session gets when one of its jobs settles unobserved."""
    return (
        f"background job {job.id} ({job.kind}: {job.label}) finished {status_line(job)}. "
        "Read its output with job_output."
    )


__all__ = [
    "MAX_JOBS_PER_OWNER",
    "RETAIN_BYTES",
    "Job",
    "JobError",
    "JobTable",
    "Outcome",
    "completion_notice",
    "status_line",
]
