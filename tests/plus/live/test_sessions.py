"""Pure and in-process pieces of `acp_plus.live.sessions`: permission mapping, the output queue."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from acp_plus.live.output_queue import OutputQueue
from acp_plus.live.sessions import permission_outcome, permission_params


@pytest.mark.parametrize(
    ("response", "outcome"),
    [
        ({"outcome": {"outcome": "cancelled"}}, "cancelled"),
        ({"outcome": {"outcome": "selected", "optionId": "allow-once"}}, "allowed-once"),
        ({"outcome": {"outcome": "selected", "optionId": "reject-once"}}, "rejected"),
        # §4: any other selection, including unknown ids, is a rejection.
        ({"outcome": {"outcome": "selected", "optionId": "allow-always"}}, "rejected"),
    ],
)
def test_permission_outcome_mapping(response: dict[str, Any], outcome: str) -> None:
    assert permission_outcome(response) == outcome


@pytest.mark.parametrize("response", [None, {}, {"outcome": "selected"}, {"outcome": {}}])
def test_malformed_permission_answers_raise_so_the_chain_fails_closed(response: Any) -> None:
    with pytest.raises(ValueError):
        permission_outcome(response)


def test_permission_params_are_exact() -> None:
    params = permission_params("s-1", "call-7")
    assert params == {
        "sessionId": "s-1",
        "toolCall": {"toolCallId": "call-7"},
        "options": [
            {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
        ],
    }
    # Each call gets its own option objects (no shared mutable state).
    params["options"][0]["name"] = "changed"
    assert permission_params("s", "c")["options"][0]["name"] == "Allow once"


async def test_output_queue_keeps_order_survives_failures_and_drains() -> None:
    sent: list[int] = []
    gate = asyncio.Event()

    async def send(item: dict[str, Any]) -> None:
        if item["n"] == 0:
            await gate.wait()  # the first send is slow: later items must wait for it
        if item["n"] == 2:
            raise OSError("client gone for a moment")
        sent.append(item["n"])

    queue = OutputQueue(send)
    for n in range(5):
        queue.put({"n": n})
    drained = asyncio.create_task(queue.drain())
    await asyncio.sleep(0.01)
    assert not drained.done() and sent == []
    gate.set()
    await asyncio.wait_for(drained, 1)
    assert sent == [0, 1, 3, 4]  # the failed item is dropped, the rest keep their order
    queue.put({"n": 5})
    await queue.drain()
    assert sent[-1] == 5
