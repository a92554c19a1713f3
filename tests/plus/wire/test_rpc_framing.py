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
        # Native 0.2.1-rc.2's SDK answers every invalid message with id null.
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"x"}', -32600, None),
        (b'{"id":3,"method":"x"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":4,"method":5}', -32600, None),
    ],
)
def test_bad_lines_become_errors_with_the_right_id(line: bytes, code: int, msg_id: object) -> None:
    message = classify(line)
    assert isinstance(message, Invalid)
    assert message.error.code == code
    assert message.id == msg_id


def test_an_invalid_request_carries_what_came_as_its_data() -> None:
    # As native 0.2.1-rc.2 answers (observed: 42, true, null, "just a string").
    for line, data in (
        (b"42", 42),
        (b"true", True),
        (b'"s"', "s"),
        (b'{"jsonrpc":"2.0"}', {"jsonrpc": "2.0"}),
    ):
        message = classify(line)
        assert isinstance(message, Invalid)
        assert message.error.to_json() == {
            "code": -32600,
            "message": "Invalid request",
            "data": data,
        }


def test_a_response_shaped_line_is_never_answered() -> None:
    # No method, and an id, result or error: routed as a response, as native 0.2.1-rc.2
    # does (observed: {"id":5} gets no answer), even without the envelope.
    assert classify(b'{"jsonrpc":"2.0","id":7}') == Response(7, None, None)
    assert classify(b'{"id":5}') == Response(5, None, None)
    assert classify(b'{"result":1}') == Response(None, 1, None)


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
