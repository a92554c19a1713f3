"""The steps' JSON-RPC to the agent: request ids, request and response, notifications.

A step's request waits for the response with its id within the response timeout; an
`initialize` that is the first thing a process is asked to do gets the startup timeout,
counted from the spawn. The step's record keeps what was sent and what came back, and
its mark (`Recording.marks`) moves past the response.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parity.core.transcript import StepRecord
from parity.driver import jsonrpc
from parity.driver.agent import AgentSlot
from parity.driver.connection import AgentGone, Connection, OversizeAnswer, id_key
from parity.driver.recording import Recording
from parity.driver.step_errors import NoResponse


class Requests:
    """Sends the steps' requests and notifications of one run."""

    def __init__(
        self, agent: AgentSlot, recording: Recording, timeouts: Mapping[str, float]
    ) -> None:
        self.agent = agent
        self.recording = recording
        self.timeouts = timeouts
        self.next_id = 0

    def new_id(self) -> int:
        id_, self.next_id = self.next_id, self.next_id + 1
        return id_

    async def call(self, record: StepRecord, method: str, params: Any) -> dict[str, Any]:
        """Send a request for a step and wait for its response (recorded on `record`)."""
        msg = jsonrpc.request(self.new_id(), method, params)
        return await self.exchange(record, self.agent.live(), msg)

    async def exchange(
        self, record: StepRecord, conn: Connection, msg: dict[str, Any]
    ) -> dict[str, Any]:
        """Send `msg` (a request) and wait for the response with its id."""
        fut = conn.expect(msg["id"])
        record.request = msg
        which = "response"
        timeout = self.timeouts["response"]
        if conn.fresh and msg.get("method") == "initialize":
            # The startup timeout runs from spawn to the answer of an initialize that is
            # the first thing the process is asked to do.
            which = "startup"
            timeout = max(self.timeouts["startup"] - (self.recording.now() - conn.spawned_at), 0.0)
        try:
            await conn.send_text(jsonrpc.encode(msg), msg)
            reply = await conn.response(fut, timeout)
        except AgentGone:
            raise await self.agent.gone(conn, record.label) from None
        except OversizeAnswer as exc:
            raise exc.named(record.label) from None
        except TimeoutError:
            raise NoResponse(
                f"no response to {record.label} within the {which} timeout "
                f"({self.timeouts[which]:g} s)",
                self.timeouts[which],
            ) from None
        finally:
            conn.pending.pop(id_key(msg["id"]), None)
        record.response = reply.message
        self.recording.marks[record.index] = reply.frame.seq + 1
        if msg.get("method") == "initialize" and not conn.initialized:
            conn.initialized = True
            # Spawn to first initialize answer, per process (a restart adds one).
            key = "startup" if conn.index == 0 else f"startup.{conn.index}"
            self.recording.transcript.timings[key] = self.recording.now() - conn.spawned_at
        return reply.message

    async def notify(self, record: StepRecord, method: str, params: Any) -> None:
        conn = self.agent.live()
        msg = jsonrpc.notification(method, params)
        record.request = msg
        try:
            frame = await conn.send(msg)
        except AgentGone:
            raise await self.agent.gone(conn, record.label) from None
        self.recording.marks[record.index] = frame.seq + 1
