"""One run as the step handlers see it: its parts, and the names its steps define.

A `Run` is made of the recording (`parity.driver.recording`), the client's answers
(`parity.driver.answers`), the agent process (`parity.driver.agent`) and the steps'
requests (`parity.driver.requests`); the step handlers (`parity.driver.dispatch`) add
what they learn (session ids, prompt ids, the last list cursor) and read it back
through `lookup` when they fill in placeholders.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from parity.core.transcript import ModelRequest, Transcript
from parity.driver.agent import AgentSlot
from parity.driver.answers import ClientAnswers
from parity.driver.process import Ladder, agent_env
from parity.driver.recording import Recording
from parity.driver.requests import Requests
from parity.driver.step_errors import ScriptError
from parity.driver.terminals import Terminals
from parity.driver.triggers import hold_answer
from parity.scenario.model import Scenario
from parity.targets.launch import Launch
from parity.targets.tolerances import effective_timeouts

DEFAULT_TIMEOUTS: dict[str, float] = {"startup": 15.0, "response": 15.0, "run": 120.0}
"""Seconds; a scenario's and its target's `timeouts` override these per key
(`parity.targets.tolerances.effective_timeouts`)."""


@dataclass
class InFlight:
    """The named prompts in flight in each session, oldest first. The oldest owns the
    session's turn: the permission answers by prompt (`client.permission.by_prompt`)
    go by it. A second prompt sent to a busy session (refused as "already in flight",
    or queued) does not take the turn over: its early end must not leave the first
    prompt's requests without their prompt, and a request the first one's turn makes
    just as the second is sent is still the first one's."""

    prompts: dict[Any, list[str]] = field(default_factory=dict)

    def start(self, sid: Any, name: str) -> None:
        self.prompts.setdefault(sid, []).append(name)

    def end(self, sid: Any, name: str) -> None:
        names = self.prompts.get(sid, [])
        if name in names:
            names.remove(name)
        if not names:
            self.prompts.pop(sid, None)

    def owner(self, sid: Any) -> str | None:
        """The prompt whose turn runs in session `sid`, if any."""
        names = self.prompts.get(sid)
        return names[0] if names else None


class LlmRun(Protocol):
    """What the driver needs from the fake LLM's per-run handle (`parity.fakellm`)."""

    @property
    def base_url(self) -> str: ...

    @property
    def requests(self) -> list[ModelRequest]: ...

    def on_request(self, callback: Callable[[ModelRequest], None]) -> None:
        """Register `callback`; it is called from the server's thread per request."""
        ...

    def mark_start(self, t0: float) -> None:
        """Set the run's time origin (a `time.monotonic()` value)."""
        ...

    def bind_paths(self, paths: Mapping[str, str]) -> None:
        """Name the run's directories (`workdir`, `home`, ...) for the script's tokens."""
        ...

    def prompt_in_flight(self, name: str, flying: bool) -> None:
        """The prompt step named `name` was sent (True) or answered (False): the script's
        entries for that prompt (`prompt: NAME`) answer only while it is in flight."""
        ...

    def client_session(self, session_id: str) -> None:
        """The client used this session id: model requests naming another one come from
        a child agent (`agent: N` entries answer them)."""
        ...


@dataclass
class RunPaths:
    """The private directories of one run (all under `root`, removed afterwards)."""

    root: Path
    home: Path
    workdir: Path
    tmp: Path


class Run:
    """One scenario run (see the module docstring)."""

    def __init__(
        self,
        scenario: Scenario,
        launch: Launch,
        paths: RunPaths,
        transcript: Transcript,
        llm_run: LlmRun | None,
        ladder: Ladder,
        target_timeouts: Mapping[str, float] | None = None,
    ) -> None:
        self.scenario = scenario
        self.launch = launch
        self.paths = paths
        self.llm_run = llm_run
        self.recording = Recording(transcript)
        self.timeouts = effective_timeouts(
            DEFAULT_TIMEOUTS, scenario.timeouts or {}, target_timeouts or {}
        )
        self.client: Mapping[str, Any] = scenario.client or {}
        self.loop = asyncio.get_running_loop()
        env = agent_env(os.environ, paths.home, paths.tmp, launch.env)
        self.terminals = Terminals(env, paths.workdir)
        self.flying = InFlight()
        """sessionId -> the named prompts in flight in it (`client.permission.by_prompt`)."""
        self.answers = ClientAnswers(
            self.client,
            paths.workdir,
            self.terminals,
            self.recording.tool_titles,
            self.recording.problem,
            lambda after, msg, seq: hold_answer(self.recording, after, msg, seq),
            self.flying.owner,
        )
        self.agent = AgentSlot(
            launch,
            env,
            paths.workdir,
            self.recording,
            self.answers.answer,
            ladder,
            self.timeouts["response"],
        )
        self.requests = Requests(self.agent, self.recording, self.timeouts)
        self.sessions: dict[str, Any] = {}
        self.session_since: dict[str, int] = {}
        """Session name -> the frame seq of its session/new request (for `wait` with a
        `session`: an update may race ahead of the session/new response)."""
        self.prompts: dict[str, Any] = {}
        self.last_cursor: Any = None
        self.steps_done = 0
        self.current = 0
        """Index in `transcript.steps` of the top-level step being run."""

    @property
    def transcript(self) -> Transcript:
        return self.recording.transcript

    def lookup(self, name: str) -> str:
        """The value of a placeholder name: `workdir`, `home`, `tmp`, `session:NAME`,
        `request:NAME`."""
        if name == "workdir":
            return str(self.paths.workdir)
        if name == "home":
            return str(self.paths.home)
        if name == "tmp":
            return str(self.paths.tmp)
        kind, _, key = name.partition(":")
        table = self.sessions if kind == "session" else self.prompts
        if key not in table:
            raise ScriptError(f"unknown {kind} name {key!r}")
        return str(table[key])

    def session_id(self, params: Mapping[str, Any]) -> Any:
        """The id of the session a step's `session` names."""
        name = params.get("session")
        if name not in self.sessions:
            raise ScriptError(f"unknown session name {name!r} (no session was created `as` it)")
        return self.sessions[name]
