"""JSON-RPC error values with the exact shapes native dsh-acp puts on the wire (contract §1.0).

The native bridge builds its errors with the ACP TypeScript SDK helpers, so the message
texts here ("Invalid params: <detail>", `"Method not found": <method>` ...) are SDK
facts that a parity harness compares byte for byte.
"""

from __future__ import annotations

from typing import Any

from acp_plus.core.js_json import js_parse

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class RpcError(Exception):
    """A JSON-RPC error response body; raise it from a handler to answer with it.

    `data` of None means "no data member" (the SDK omits it for bridge-chosen errors);
    use `has_data=True` to send an explicit JSON null.
    """

    def __init__(
        self, code: int, message: str, data: Any = None, *, has_data: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.has_data = has_data or data is not None

    def to_json(self) -> dict[str, Any]:
        """The `error` member of a JSON-RPC response: `{code, message, data?}`."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.has_data:
            body["data"] = self.data
        return body

    def __repr__(self) -> str:
        return f"RpcError({self.code}, {self.message!r}, data={self.data!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RpcError) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        # Exceptions must stay hashable (tracebacks and task machinery may keep them in
        # sets); equal errors share code and message, so this agrees with __eq__.
        return hash((self.code, self.message))


def _with_detail(prefix: str, detail: str | None) -> str:
    # The SDK appends ": <detail>" only for a non-empty detail.
    return f"{prefix}: {detail}" if detail else prefix


def invalid_params(detail: str | None = None, *, data: Any = None) -> RpcError:
    """-32602 `Invalid params[: <detail>]`; `data` only for schema failures (no detail)."""
    return RpcError(INVALID_PARAMS, _with_detail("Invalid params", detail), data)


def internal_error(detail: str | None = None, *, data: Any = None) -> RpcError:
    """-32603 `Internal error[: <detail>]`."""
    return RpcError(INTERNAL_ERROR, _with_detail("Internal error", detail), data)


def method_not_found(method: str) -> RpcError:
    """-32601 with the SDK's quoted message and `data: {"method": <method>}`."""
    return RpcError(METHOD_NOT_FOUND, f'"Method not found": {method}', {"method": method})


def parse_error(data: Any = None) -> RpcError:
    """-32700 `Parse error`, for a line that is not JSON."""
    return RpcError(PARSE_ERROR, "Parse error", data)


def invalid_request(data: Any = None) -> RpcError:
    """-32600 `Invalid request` (the SDK's spelling), for JSON that is not a JSON-RPC message."""
    return RpcError(INVALID_REQUEST, "Invalid request", data)


def exception_data(message: str) -> Any:
    """The `data` the SDK derives from a plain exception message (§1.0).

    JSON text parses to its value, any other non-empty text becomes `{"details": text}`,
    and an empty message gives `{}`.
    """
    if message == "":
        return {}
    try:
        return js_parse(message)
    except (ValueError, RecursionError):
        return {"details": message}


def from_exception(exc: BaseException) -> RpcError:
    """-32603 `Internal error` for an exception that is not an RpcError (§1.0).

    An RpcError passes through unchanged, so handlers may call this on anything they catch.
    """
    if isinstance(exc, RpcError):
        return exc
    return RpcError(INTERNAL_ERROR, "Internal error", exception_data(str(exc)), has_data=True)


# Texts shared by most session methods (§1.0); one place so every handler says them alike.


def unknown_session(session_id: str) -> RpcError:
    """-32602 `Invalid params: unknown session: <id>`."""
    return invalid_params(f"unknown session: {session_id}")


def session_closing(session_id: str) -> RpcError:
    """-32602 `Invalid params: session is closing: <id>`."""
    return invalid_params(f"session is closing: {session_id}")


def bridge_disposed() -> RpcError:
    """-32603 `Internal error: the ACP bridge has been disposed`."""
    return internal_error("the ACP bridge has been disposed")
