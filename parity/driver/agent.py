"""The run's agent process: start it, stop it, and say why it is gone.

A run has one agent process at a time; a `restart` step stops it and starts the next
(each gets its own `ProcessRecord` and `Connection`). The process runs in its own
process group (`parity.driver.process`), in the run's workdir unless the launch names
another directory.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from parity.driver.connection import Answer, Connection
from parity.driver.process import Ladder, spawn
from parity.driver.recording import Recording
from parity.driver.step_errors import StepProblem
from parity.targets.launch import Launch


def _tail(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]


class AgentSlot:
    """The current agent process of one run, if one is running (`conn`)."""

    def __init__(
        self,
        launch: Launch,
        env: Mapping[str, str],
        workdir: Path,
        recording: Recording,
        answer: Answer,
        ladder: Ladder,
        write_timeout: float,
    ) -> None:
        self.launch = launch
        self.env = env
        self.workdir = workdir
        self.recording = recording
        self.answer = answer
        self.ladder = ladder
        self.write_timeout = write_timeout
        self.conn: Connection | None = None

    async def start(self) -> None:
        argv = [str(a) for a in self.launch.argv]
        cwd = self.launch.cwd or self.workdir
        spawned_at = self.recording.now()
        try:
            agent = await spawn(argv, self.env, cwd)
        except OSError as exc:
            raise StepProblem(f"cannot start target {argv[0]!r}: {exc}") from exc
        processes = self.recording.transcript.processes
        processes.append(agent.record)
        self.conn = Connection(
            self.recording, self.answer, agent, len(processes) - 1, spawned_at, self.write_timeout
        )

    async def stop(self) -> None:
        conn, self.conn = self.conn, None
        if conn is None:
            return
        await conn.close(self.ladder)
        record = conn.agent.record
        if record.stopped_by == "exit" and not conn.reported_exit:
            self.recording.problem(
                "exit", f"agent exited by itself before teardown ({conn.agent.status()})"
            )

    def live(self) -> Connection:
        """The running process's connection (a `StepProblem` when there is none)."""
        if self.conn is None:
            raise StepProblem("no agent process is running")
        return self.conn

    async def gone(self, conn: Connection, label: str) -> StepProblem:
        """The problem of a step during which the agent went away (exit or closed stdout)."""
        # Give the process a moment to finish exiting so the status and tail are whole.
        await conn.agent.settle(1.0)
        conn.reported_exit = True
        if conn.agent.exited():
            text = f"agent exited during {label} ({conn.agent.status()})"
        else:
            text = f"agent closed its stdout during {label} (the process is still running)"
        tail = _tail(conn.agent.stderr_tail().rstrip())
        return StepProblem(f"{text}; stderr tail:\n{tail}" if tail else f"{text}; stderr empty")
