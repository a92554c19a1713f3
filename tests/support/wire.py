"""Hand-built transcripts for the normalize tests: steps and frames in wire order."""

from __future__ import annotations

import json
from typing import Any

from parity.core.transcript import Frame, ModelRequest, ProcessRecord, StepRecord, Transcript


class Wire:
    """Appends frames to a transcript; frames go to the open step, if any."""

    def __init__(self, paths: dict[str, str] | None = None, target: str = "plus") -> None:
        self.t = Transcript(scenario="unit/case", target=target, run_id="r1", paths=paths or {})
        self.open: StepRecord | None = None

    def step(self, kind: str, label: str) -> Wire:
        self.open = StepRecord(
            index=len(self.t.steps), kind=kind, label=label, t_start=len(self.t.frames) * 0.01
        )
        self.t.steps.append(self.open)
        return self

    def end(self, problem: str | None = None) -> Wire:
        assert self.open is not None
        self.open.problem = problem
        self.open = None
        return self

    def frame(self, direction: str, message: Any, raw: str | None = None) -> int:
        seq = len(self.t.frames)
        parse_error = "Expecting value" if raw is not None and message is None else None
        self.t.frames.append(
            Frame(
                seq=seq,
                t=seq * 0.01,
                direction="out" if direction == "out" else "in",
                raw=raw if raw is not None else json.dumps(message),
                message=message,
                parse_error=parse_error,
            )
        )
        step = self.open
        if step is not None:
            step.frames.append(seq)
            if isinstance(message, dict):
                if direction == "out" and "method" in message and step.request is None:
                    step.request = message
                elif (
                    direction == "in"
                    and "method" not in message
                    and isinstance(step.request, dict)
                    and message.get("id") == step.request.get("id")
                ):
                    step.response = message
        return seq

    def send(self, ident: int, method: str, params: Any) -> Wire:
        self.frame("out", {"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        return self

    def reply(self, ident: Any, result: Any = None, error: Any = None) -> Wire:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": ident}
        if error is not None:
            body["error"] = error
        else:
            body["result"] = result
        self.frame("in", body)
        return self

    def answer(self, ident: Any, result: Any) -> Wire:
        self.frame("out", {"jsonrpc": "2.0", "id": ident, "result": result})
        return self

    def ask(self, ident: Any, method: str, params: Any) -> Wire:
        self.frame("in", {"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        return self

    def notify(self, method: str, params: Any, direction: str = "in") -> Wire:
        self.frame(direction, {"jsonrpc": "2.0", "method": method, "params": params})
        return self

    def update(self, session: str, update: dict[str, Any]) -> Wire:
        return self.notify("session/update", {"sessionId": session, "update": update})

    def model(self, body: Any, **kw: Any) -> Wire:
        self.t.model_requests.append(
            ModelRequest(
                seq=len(self.t.model_requests),
                t=1.0,
                method="POST",
                path=kw.pop("path", "/stream"),
                dialect="parity-stream",
                body=body,
                **kw,
            )
        )
        return self

    def process(self, **kw: Any) -> Wire:
        self.t.processes.append(ProcessRecord(argv=["agent", "--port", "4711"], pid=999, **kw))
        return self


def chunk(message_id: str | None, text: str, kind: str = "agent_message_chunk") -> dict[str, Any]:
    """An ACP text chunk update."""
    update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        update["messageId"] = message_id
    return update
