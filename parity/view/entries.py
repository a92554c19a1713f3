"""One frame -> its entry in a view: sent requests, results, errors, updates, agent
requests with the client's answer, notes for anything else.

Every value goes through the run's `Tokens` (`parity.view.tokens`), so ids, machine paths
and times are already scrubbed; `parity.view.normalize` places the entries under steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parity.core.transcript import SET_ASIDE, Frame
from parity.view.tokens import Tokens

AGENT_REQUEST_KINDS: dict[str, str] = {
    "session/request_permission": "permission",
    "elicitation/create": "elicitation",
}
"""Agent -> client request ids get a token kind by method: peers use random ids for them."""

RAW_HEAD = 200
"""Characters of an unparsable line kept in the view."""


class Entries:
    """Builds the view entries of one transcript's frames."""

    def __init__(
        self,
        tokens: Tokens,
        frames: Sequence[Frame],
        answers: Mapping[int, int],
        multi_session: bool,
    ) -> None:
        self.tokens = tokens
        self.frames = frames
        self.answers = answers
        """Agent request seq -> the seq of the harness's answer."""
        self.multi_session = multi_session
        """More than one session: each update names its session."""

    def send(self, request: Any) -> dict[str, Any]:
        if isinstance(request, dict) and "method" in request:
            sent: dict[str, Any] = {"method": request["method"]}
            if "params" in request:
                sent["params"] = self._params(request["method"], request["params"], "out")
            return sent
        if isinstance(request, str):
            return {"raw": self.tokens.scrub_text(request)}
        return {"raw": self.tokens.scrub(request)}

    def _params(self, method: Any, params: Any, direction: str) -> Any:
        scrubbed = self.tokens.scrub(params)
        # `$/cancel_request` names one of the sender's own request ids; keep the link.
        if method == "$/cancel_request" and isinstance(params, dict) and "requestId" in params:
            scrubbed["requestId"] = self._request_token(direction, params["requestId"])
        return scrubbed

    def _request_token(self, direction: str, ident: Any) -> Any:
        """The token of a JSON-RPC id sent by `direction`'s side, else the scrubbed id."""
        kinds = (
            ("request",) if direction == "out" else ("permission", "elicitation", "agent-request")
        )
        for kind in kinds:
            token = self.tokens.lookup(kind, (direction, ident))
            if isinstance(token, str):
                return token
        return self.tokens.scrub(ident)

    def error(self, error: Any) -> Any:
        if not isinstance(error, dict):
            return self.tokens.scrub(error)
        out = {k: self.tokens.scrub(error[k]) for k in ("code", "message") if k in error}
        if "data" in error:
            out["data"] = self.tokens.scrub(error["data"])
        out.update({k: self.tokens.scrub(v) for k, v in error.items() if k not in out})
        return out

    def classify(self, f: Frame) -> tuple[str, Any]:
        """(bucket, entry) for one frame that is not the step's own request/response."""
        if f.parse_error is not None or f.oversize:
            # A line the harness set aside after the run (`parity.engine.postrun`) is
            # no line the agent got wrong: it says so.
            key = "set_aside" if f.parse_error and f.parse_error.startswith(SET_ASIDE) else ""
            entry: dict[str, Any] = {key or "unparsable": _head(self.tokens.scrub_text(f.raw))}
            if f.direction == "out":
                entry = {"sent_raw": entry[key or "unparsable"]}
            if f.oversize:
                entry["oversize"] = True
            return "note", entry
        msg = f.message
        if not isinstance(msg, dict):
            key = "sent_raw" if f.direction == "out" else "not_jsonrpc"
            return "note", {key: self.tokens.scrub(msg)}
        method = msg.get("method")
        if f.direction == "in" and method is not None and "id" in msg:
            return "agent_request", self._agent_request(f)
        if f.direction == "in" and method == "session/update" and "id" not in msg:
            return "update", self._update(msg.get("params"))
        if f.direction == "in" and method is not None:
            return "note", {"notify": self._call(msg, "in")}
        if f.direction == "in":
            return "note", {"response": self._response(msg, "out")}
        if method is not None:
            return "note", {"sent": self._call(msg, "out")}
        return "note", {"sent_response": self._response(msg, "in")}

    def _call(self, msg: dict[str, Any], direction: str) -> dict[str, Any]:
        call: dict[str, Any] = {"method": msg["method"]}
        if "params" in msg:
            call["params"] = self._params(msg["method"], msg["params"], direction)
        return call

    def _response(self, msg: dict[str, Any], request_direction: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if "id" in msg:
            out["id"] = self._request_token(request_direction, msg["id"])
        if "result" in msg:
            out["result"] = self.tokens.scrub(msg["result"])
        if "error" in msg:
            out["error"] = self.error(msg["error"])
        return out

    def _agent_request(self, f: Frame) -> dict[str, Any]:
        entry = self._call(f.message, "in")
        answer_seq = self.answers.get(f.seq)
        if answer_seq is None:
            entry["answer"] = None
        else:
            answer = self.frames[answer_seq].message
            entry["answer"] = (
                {"error": self.error(answer["error"])}
                if "error" in answer
                else {"result": self.tokens.scrub(answer.get("result"))}
            )
        return entry

    def _update(self, params: Any) -> dict[str, Any]:
        if not isinstance(params, dict) or not isinstance(params.get("update"), dict):
            return {"malformed": self.tokens.scrub(params)}
        update = self.tokens.scrub(params["update"])
        entry: dict[str, Any] = {}
        if "sessionUpdate" in update:
            entry["sessionUpdate"] = update.pop("sessionUpdate")
        if self.multi_session:
            entry["session"] = self.tokens.lookup("session", params.get("sessionId"))
        entry.update(update)
        extra = {k: v for k, v in params.items() if k not in ("sessionId", "update")}
        if extra:
            entry["notification"] = self.tokens.scrub(extra)
        return entry

    def loose(self, f: Frame) -> dict[str, Any]:
        """A frame outside every step, as one tagged entry."""
        bucket, entry = self.classify(f)
        if bucket == "update":
            return {"update": entry}
        if bucket == "agent_request":
            return {"agent_request": entry}
        return dict(entry)


def _head(text: str) -> str:
    # Unparsable lines can be megabytes (an oversize frame's head alone is large); the
    # view keeps enough to recognise the line.
    return text if len(text) <= RAW_HEAD else text[:RAW_HEAD] + f"... ({len(text)} chars)"
