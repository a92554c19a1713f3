"""Error shapes of contract §1.0, compared as the JSON objects that go on the wire."""

from __future__ import annotations

from typing import Any

import pytest

from acp_plus.wire import errors


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (errors.invalid_params(), {"code": -32602, "message": "Invalid params"}),
        (errors.invalid_params(""), {"code": -32602, "message": "Invalid params"}),
        (
            errors.invalid_params("cwd must be an absolute path: rel"),
            {"code": -32602, "message": "Invalid params: cwd must be an absolute path: rel"},
        ),
        (
            errors.invalid_params(data={"issues": []}),
            {"code": -32602, "message": "Invalid params", "data": {"issues": []}},
        ),
        (errors.internal_error(), {"code": -32603, "message": "Internal error"}),
        (
            errors.internal_error("turn failed: provider blew up"),
            {"code": -32603, "message": "Internal error: turn failed: provider blew up"},
        ),
        (
            errors.method_not_found("session/load"),
            {
                "code": -32601,
                "message": '"Method not found": session/load',
                "data": {"method": "session/load"},
            },
        ),
        (errors.parse_error(), {"code": -32700, "message": "Parse error"}),
        (errors.invalid_request(), {"code": -32600, "message": "Invalid request"}),
        (
            errors.unknown_session("abc"),
            {"code": -32602, "message": "Invalid params: unknown session: abc"},
        ),
        (
            errors.session_closing("abc"),
            {"code": -32602, "message": "Invalid params: session is closing: abc"},
        ),
        (
            errors.bridge_disposed(),
            {"code": -32603, "message": "Internal error: the ACP bridge has been disposed"},
        ),
    ],
)
def test_constructor_shapes(error: errors.RpcError, expected: dict[str, Any]) -> None:
    assert error.to_json() == expected


@pytest.mark.parametrize(
    ("message", "data"),
    [
        ("boom", {"details": "boom"}),
        ("", {}),
        ('{"code":"X","n":1}', {"code": "X", "n": 1}),
        ("[1,2]", [1, 2]),
        ("42", 42),
        ("null", None),  # JSON null is JSON: data is present and null
        ("NaN", {"details": "NaN"}),  # JS JSON.parse has no NaN literal
        ("{not json", {"details": "{not json"}),
    ],
)
def test_from_exception_data(message: str, data: Any) -> None:
    body = errors.from_exception(RuntimeError(message)).to_json()
    assert body == {"code": -32603, "message": "Internal error", "data": data}


def test_from_exception_passes_rpc_errors_through() -> None:
    original = errors.invalid_params("x")
    assert errors.from_exception(original) is original


def test_rpc_error_is_raisable_and_comparable() -> None:
    with pytest.raises(errors.RpcError) as caught:
        raise errors.unknown_session("s1")
    assert caught.value == errors.invalid_params("unknown session: s1")
    assert caught.value != errors.internal_error("unknown session: s1")
    assert str(caught.value) == "Invalid params: unknown session: s1"


def test_from_exception_uses_js_number_rules_and_survives_deep_nesting() -> None:
    assert errors.from_exception(RuntimeError("1.0")).to_json()["data"] == 1
    assert isinstance(errors.from_exception(RuntimeError("1.0")).to_json()["data"], int)
    deep = "[" * 100_000
    assert errors.from_exception(RuntimeError(deep)).to_json()["data"] == {"details": deep}


def test_rpc_errors_stay_hashable() -> None:
    assert (
        len({errors.unknown_session("a"), errors.unknown_session("a"), errors.parse_error()}) == 2
    )
