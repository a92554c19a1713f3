"""One (scenario, target) run of the fake LLM: its script, tools, catalog, the requests
it recorded, and (recording mode, docs/capture.md) what a provider answered.

The server (`parity.fakellm.server`) looks a run up by the id in the request path and
keeps all its state here; everything is touched from the server's event loop only,
except `bind_paths`, which the driver calls before the agent starts, and
`prompt_in_flight`, which swaps one immutable set.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from parity.core.transcript import ModelRequest
from parity.fakellm import parity_stream
from parity.fakellm.identity import Identity
from parity.fakellm.recorded import Projection
from parity.fakellm.script import Script
from parity.fakellm.side_requests import SideRequests
from parity.scenario.model import Tool

if TYPE_CHECKING:
    from parity.fakellm.upstream import Upstream


@dataclass
class Captured:
    """One model call of a recording run: the provider's answer as an `llm` entry and
    the request's staleness projection, both with machine identity scrubbed."""

    entry: dict[str, Any]
    request: Projection | None


class Run:
    """One (scenario, target) run: its script, tools, catalog and recorded requests."""

    def __init__(
        self,
        run_id: str,
        base_url: str,
        entries: Sequence[Mapping[str, Any]],
        tools: Sequence[Tool],
        catalog: Mapping[str, Any],
        *,
        upstream: Upstream | None = None,
        api_key: str | None = None,
    ) -> None:
        self.run_id = run_id
        self.base_url = base_url
        self.requests: list[ModelRequest] = []
        self.script = Script(list(entries))
        self.tools = {tool.name: tool for tool in tools}
        self.catalog = parity_stream.catalog(catalog, tools)
        self.upstream = upstream
        """Set: a recording run (docs/capture.md), whose model calls go to a provider."""
        self.api_key = api_key
        """Set: model calls must carry this key (the fake standing in for a provider)."""
        self.captured: list[Captured | None] = []
        """A recording run's model calls in arrival order (None: aborted, unanswered)."""
        self.identity = Identity(
            user_home=os.path.expanduser("~"),
            user=getpass.getuser(),
            secrets=(upstream.api_key,) if upstream is not None else (),
        )
        self.sides = SideRequests()
        """Which of the run's tool-less requests are side requests (titles, ...)."""
        self.closed = False
        self.client_sessions: frozenset[str] = frozenset()
        """The session ids the client used (set by the driver's thread, replaced whole)."""
        self.children: dict[str, int] = {}
        """A child agent's session id -> its number, in the order of its first request."""
        self._t0 = time.monotonic()
        self._callbacks: list[Callable[[ModelRequest], None]] = []
        self._abort_callbacks: list[Callable[[ModelRequest], None]] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    def on_request(self, cb: Callable[[ModelRequest], None]) -> None:
        """Call `cb` with each request as it arrives (on the server's thread)."""
        self._callbacks.append(cb)

    def on_abort(self, cb: Callable[[ModelRequest], None]) -> None:
        """Call `cb` with a request the client aborted, once, when it is marked `aborted`
        (on the server's thread; a request ended by the run closing is not an abort)."""
        self._abort_callbacks.append(cb)

    def bind_paths(self, paths: Mapping[str, str]) -> None:
        """Name the run's machine paths (`{"workdir": ...}`, more with each call): the
        script's `<workdir>`-style tokens become these paths in answers, and recorded
        traffic gets the tokens back (`identity.Identity`)."""
        merged = {**self.identity.paths, **paths}
        self.identity = Identity(
            merged, self.identity.user_home, self.identity.user, self.identity.secrets
        )
        self.script.expand = self.identity.expand_value

    def prompt_in_flight(self, name: str, flying: bool) -> None:
        """The driver sent (True) or got the answer to (False) the prompt named `name`.
        Called on the driver's thread: the script swaps in a new frozenset, which the
        server's thread only reads (`Script.in_flight`)."""
        flight = self.script.in_flight
        self.script.in_flight = flight | {name} if flying else flight - {name}

    def client_session(self, session_id: str) -> None:
        """The client named this session (a `session/new` answer, a request's params):
        its model requests are the main agent's. Called on the driver's thread; swaps
        one immutable set, which the server's thread only reads."""
        if session_id not in self.client_sessions:
            self.client_sessions = self.client_sessions | {session_id}
            self.script.client_sessions = (*self.script.client_sessions, session_id)

    def agent_of(self, body: Any) -> int:
        """Whose model request this is (`ModelRequest.agent`): a parity-stream body whose
        `sessionId` the client never used comes from a child agent (a subagent the agent
        started), numbered in the order of its first request; anything else, and every
        request of a run whose client named no session (`parity fake-llm`), is the main
        agent's (0). On the server's thread."""
        session = body.get("sessionId") if isinstance(body, Mapping) else None
        if not isinstance(session, str) or not self.client_sessions:
            return 0
        if session in self.client_sessions:
            return 0
        return self.children.setdefault(session, len(self.children) + 1)

    def mark_start(self, t0: float) -> None:
        """Set the `time.monotonic()` reference that `ModelRequest.t` is relative to."""
        self._t0 = t0

    def now(self) -> float:
        """Seconds since the run's start reference."""
        return time.monotonic() - self._t0

    def record(self, method: str, path: str, dialect: str, body: Any) -> ModelRequest:
        """Append a new request record and tell the listeners."""
        rec = ModelRequest(
            seq=len(self.requests),
            t=self.now(),
            method=method,
            path=path,
            dialect=dialect,
            body=body,
        )
        self.requests.append(rec)
        for cb in self._callbacks:
            try:
                cb(rec)
            except Exception as exc:  # a listener's bug must not take the fake down
                print(f"fakellm: on_request callback failed: {exc!r}", file=sys.stderr)
        return rec

    @property
    def in_flight(self) -> int:
        """Answers of this run still streaming, delayed or held open (0 once all ended)."""
        return len(self._tasks)

    @contextmanager
    def answering(self, rec: ModelRequest) -> Iterator[None]:
        """Around an answer that takes time: registers the handler task so `close`
        can end it, and records how it ended early (client abort or run closing)."""
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            yield
        except asyncio.CancelledError:
            self.interrupted(rec)
            raise
        finally:
            if task is not None:
                self._tasks.discard(task)

    def close(self) -> None:
        """End every in-flight request of this run (recorded as `run closed`)."""
        self.closed = True
        for task in list(self._tasks):
            task.cancel()

    def interrupted(self, rec: ModelRequest) -> None:
        """Record why an in-flight request ended early: a client abort or the run closing."""
        if rec.aborted or rec.problem == "run closed":
            return
        if self.closed:
            rec.problem = "run closed"
        else:
            rec.aborted = True
            rec.aborted_at = self.now()
            for cb in self._abort_callbacks:
                try:
                    cb(rec)
                except Exception as exc:  # as in `record`: never take the fake down
                    print(f"fakellm: on_abort callback failed: {exc!r}", file=sys.stderr)
