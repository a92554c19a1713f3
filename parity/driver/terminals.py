"""The client's terminals (`terminal/*`), served when a scenario declares `client.terminal`.

Each terminal is a real process in its own process group, started in the run's workdir
with the agent's environment; its output is collected up to the agent's byte limit, and
`close` kills whatever is left at teardown.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parity.driver import jsonrpc, orphans


@dataclass
class _Terminal:
    """One terminal/create: its process, output buffer and the task filling it."""

    proc: asyncio.subprocess.Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    pump: asyncio.Task[None] | None = None


class Terminals:
    """terminal/* for agents that use the client's terminals: real processes in their
    own groups under the workdir, killed at teardown."""

    def __init__(self, env: Mapping[str, str], workdir: Path) -> None:
        self.env = env
        """The agent's environment, which a terminal's own `env` entries extend."""
        self.workdir = workdir
        self.items: dict[str, _Terminal] = {}
        self.released: list[_Terminal] = []
        self.created = 0

    async def answer(self, req_id: Any, method: str, params: Any) -> dict[str, Any]:
        """Serve one terminal/* request."""
        params = params if isinstance(params, dict) else {}
        if method == "terminal/create":
            return await self.create(req_id, params)
        if method not in _TERMINAL_METHODS:
            return jsonrpc.method_not_found(req_id, method)
        term_id = str(params.get("terminalId"))
        term = self.items.get(term_id)
        if term is None:
            return jsonrpc.error(req_id, -32602, f"Invalid params: unknown terminalId: {term_id}")
        if method == "terminal/output":
            value: dict[str, Any] = {
                "output": term.output.decode("utf-8", errors="replace"),
                "truncated": term.truncated,
            }
            if term.proc.returncode is not None:
                value["exitStatus"] = _exit_status(term.proc.returncode)
            return jsonrpc.result(req_id, value)
        if method == "terminal/wait_for_exit":
            returncode = await term.proc.wait()
            if term.pump is not None:
                await term.pump
            return jsonrpc.result(req_id, _exit_status(returncode))
        _kill(term)
        if method == "terminal/release":
            # Kept for teardown, which waits for the process and its output pump.
            self.released.append(self.items.pop(term_id))
        return jsonrpc.result(req_id, {})

    async def create(self, req_id: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        """Serve terminal/create: start the command and the task collecting its output."""
        command = params.get("command")
        args = params.get("args") or []
        if not isinstance(command, str) or not isinstance(args, list):
            return jsonrpc.error(req_id, -32602, "Invalid params: command must be a string")
        env = dict(self.env)
        for item in params.get("env") or []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                env[item["name"]] = str(item.get("value", ""))
        env = orphans.marked_env(env)  # the agent's asks cannot remove the harness's mark
        cwd = params.get("cwd") or str(self.workdir)
        try:
            proc = await asyncio.create_subprocess_exec(
                command,
                *[str(a) for a in args],
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=orphans.die_with_parent,  # marked as an agent's (no new privs)
            )
        except OSError as exc:
            return jsonrpc.error(req_id, -32603, f"Internal error: {exc}")
        limit = params.get("outputByteLimit")
        orphans.claim(proc.pid)  # started here: never taken for an agent's orphan
        term = _Terminal(proc, limit if isinstance(limit, int) else None)
        term.pump = asyncio.get_running_loop().create_task(_pump(term))
        self.created += 1
        term_id = f"term-{self.created}"
        self.items[term_id] = term
        return jsonrpc.result(req_id, {"terminalId": term_id})

    async def close(self) -> None:
        """Kill every terminal's process group and wait for it (teardown)."""
        terms = [*self.items.values(), *self.released]
        self.items.clear()
        self.released.clear()
        for term in terms:
            _kill(term)
        for term in terms:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(term.proc.wait(), 2.0)
            orphans.release(term.proc.pid)
            if term.pump is not None:
                term.pump.cancel()
                await asyncio.gather(term.pump, return_exceptions=True)


_TERMINAL_METHODS = (
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
)


def _exit_status(returncode: int) -> dict[str, Any]:
    if returncode < 0:
        return {"exitCode": None, "signal": signal.Signals(-returncode).name}
    return {"exitCode": returncode, "signal": None}


def _kill(term: _Terminal) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(term.proc.pid, signal.SIGKILL)


async def _pump(term: _Terminal) -> None:
    assert term.proc.stdout is not None
    while chunk := await term.proc.stdout.read(65536):
        term.output += chunk
        if term.limit is not None and len(term.output) > term.limit:
            # Keep the tail, cut at a character boundary (ACP truncates from the start).
            cut = len(term.output) - term.limit
            while cut < len(term.output) and (term.output[cut] & 0xC0) == 0x80:
                cut += 1
            del term.output[:cut]
            term.truncated = True
