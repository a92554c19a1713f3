"""Pure framing of acp-plus's JSON-RPC layer (`acp_plus.wire.frames.classify`)."""

from __future__ import annotations

import pytest

from acp_plus.wire.frames import (
    UNDEFINED,
    Invalid,
    Notification,
    Request,
    Response,
    classify,
    encode,
)


@pytest.mark.parametrize(
    ("line", "code", "msg_id"),
    [
        (b"{not json", -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":NaN}', -32700, None),
        (b"\xff\xfe", -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"x"} trailing', -32700, None),
        (b"[1,2]", -32600, None),
        (b'"hello"', -32600, None),
        (b"42", -32600, None),
        (b'{"jsonrpc":"2.0","id":7}', -32600, 7),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"x"}', -32600, None),
        (b'{"id":3,"method":"x"}', -32600, 3),
        (b'{"jsonrpc":"2.0","id":4,"method":5}', -32600, 4),
    ],
)
def test_bad_lines_become_errors_with_the_right_id(line: bytes, code: int, msg_id: object) -> None:
    message = classify(line)
    assert isinstance(message, Invalid)
    assert message.error.code == code
    assert message.id == msg_id


def test_request_notification_and_response_are_told_apart() -> None:
    assert classify(b'{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":1}}') == Request(
        "a", "m", {"x": 1}
    )
    assert classify(b'{"jsonrpc":"2.0","method":"n"}') == Notification("n", None)
    assert classify(b'{"jsonrpc":"2.0","id":0,"result":{}}') == Response(0, {}, None)
    error = {"code": -1, "message": "no"}
    assert classify(b'{"jsonrpc":"2.0","id":0,"error":{"code":-1,"message":"no"}}') == Response(
        0, None, error
    )


def test_encode_is_one_compact_line_keeping_non_ascii() -> None:
    assert encode({"a": "é", "b": [1, 2]}) == '{"a":"é","b":[1,2]}\n'.encode()


def test_numbers_and_bytes_follow_node() -> None:
    # JSON.parse: 1.0 is the number 1; invalid UTF-8 inside a string becomes U+FFFD.
    assert classify(b'{"jsonrpc":"2.0","id":1.0,"method":"m"}') == Request(1, "m", UNDEFINED)
    assert classify(b'{"jsonrpc":"2.0","method":"m","params":"\xff"}') == Notification(
        "m", "\ufffd"
    )
    # JSON.stringify: integer-like keys first, floats without ".0".
    assert encode({"b": 1.0, "10": 2, "2": 3}) == b'{"2":3,"10":2,"b":1}\n'
