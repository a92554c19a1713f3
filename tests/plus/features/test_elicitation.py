"""M5 elicitation (docs/contract.md §6.5): `ask_user_question` bridged to the standard
ACP `elicitation/create` form; accept, decline and cancel settle the tool, and a turn
cancelled while the form is open withdraws it and settles at once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import pytest
from acp import Client, spawn_agent_process
from acp.schema import (
    AcceptElicitationResponse,
    CancelElicitationResponse,
    ClientCapabilities,
    DeclineElicitationResponse,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    TextContentBlock,
)
from feature_support import FORMS, exchange, kinds, open_session, requests_of, updates
from plus_agent import PYTHON, Recorder, World, WorldFactory, raw_agent

from acp_plus.features import elicitation as el

QUESTIONS: list[dict[str, Any]] = [
    {"id": "color", "question": "Which color?", "header": "Color", "options": [
        {"label": "red", "description": "warm"}, {"label": "blue"}]},
    {"id": "tags", "question": "Which tags?", "multiSelect": True, "detail": "pick any",
     "options": [{"label": "a"}, {"label": "b"}]},
    {"question": "Anything else?", "detail": "free text"},
]  # fmt: skip
ASK = {"id": "ask-1", "name": el.TOOL_NAME, "arguments": {"questions": QUESTIONS}, "builtin": True}


# -- pure ---------------------------------------------------------------------------------


def test_form_shapes() -> None:
    params = el.form_params("s-1", "ask-1", el.parse_questions({"questions": QUESTIONS}))
    assert params == {
        "sessionId": "s-1",
        "toolCallId": "ask-1",
        "mode": "form",
        "message": "Which color?\n\nWhich tags?\n\nAnything else?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                # single choice with a header: the header titles it, the question describes
                "color": {
                    "type": "string",
                    "title": "Color",
                    "description": "Which color?",
                    "oneOf": [
                        {"const": "red", "title": "red", "description": "warm"},
                        {"const": "blue", "title": "blue"},
                    ],
                },
                "color__other": el.OTHER_PROPERTY,
                # multiple choice without a header: the question titles it, detail describes
                "tags": {
                    "type": "array",
                    "title": "Which tags?",
                    "description": "pick any",
                    "items": {"type": "string", "enum": ["a", "b"]},
                },
                "tags__other": el.OTHER_PROPERTY,
                # free text: no `__other`; ids default to q<n>
                "q3": {"type": "string", "title": "Anything else?", "description": "free text"},
            },
        },
    }
    assert "required" not in params["requestedSchema"]


def test_answers_and_refusals() -> None:
    questions = el.parse_questions({"questions": QUESTIONS})
    content = {
        "color": "blue",
        "color__other": "  teal  ",
        "tags": ["b", 3, "a"],
        "tags__other": "   ",
        "q3": "",
    }
    result = el.tool_result(questions, {"action": "accept", "content": content})
    assert not result.is_error
    assert json.loads(result.content[0]["text"]) == {
        "answers": [
            {"id": "color", "selected": ["blue"], "custom": "teal"},
            {"id": "tags", "selected": ["b", "a"]},
            {"id": "q3", "selected": []},
        ]
    }
    assert el.tool_result(questions, {"action": "decline"}) == el.ToolResult.text(
        el.DECLINED, is_error=True
    )
    assert el.tool_result(questions, {"action": "cancel"}) == el.ToolResult.text(
        el.CANCELLED, is_error=True
    )
    assert el.tool_result(questions, {"action": "later"}).is_error


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "questions must be a non-empty array"),
        ({"questions": []}, "questions must be a non-empty array"),
        ({"questions": [{"question": " "}]}, "questions[0].question must be a non-empty string"),
        ({"questions": [{"id": "x", "question": "a"}, {"id": "x", "question": "b"}]}, "used twice"),
        ({"questions": [{"id": "x__other", "question": "a"}]}, "must be 1-64 letters"),
        ({"questions": [{"question": "a", "options": [{"label": "y"}, {"label": "y"}]}]}, "unique"),
        ({"questions": [{"question": "a", "multiSelect": "yes"}]}, "must be a boolean"),
    ],
)
def test_bad_questions_are_the_models_error(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        el.parse_questions(args)


# -- through the real process, with the official ACP client --------------------------------


@dataclass
class FormClient(Recorder):
    """A client that shows forms: answers each `elicitation/create` in turn."""

    answers: list[Any] = field(default_factory=list)
    forms: list[dict[str, Any]] = field(default_factory=list)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.forms.append({"message": message, **mode.model_dump(mode="json", by_alias=True)})
        return self.answers.pop(0)


@asynccontextmanager
async def form_client(w: World, *answers: Any) -> AsyncIterator[tuple[Any, FormClient]]:
    client = FormClient(answers=list(answers))
    with open(w.stderr, "ab") as err:
        async with spawn_agent_process(
            cast(Client, client),
            PYTHON,
            *w.argv(),
            env=w.env(),
            cwd=w.workdir,
            transport_kwargs={"stderr": err.fileno(), "shutdown_timeout": 3.0},
            use_unstable_protocol=True,
        ) as (conn, _process):
            caps = ClientCapabilities(
                elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
            )
            await conn.initialize(protocol_version=1, client_capabilities=caps)
            yield conn, client


async def _ask_once(world: WorldFactory, answer: Any) -> tuple[FormClient, World, Any]:
    w = world(llm=[{"tool_calls": [ASK]}, {"text": "thanks"}])
    async with form_client(w, answer) as (conn, client):
        new = await conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        result = await conn.prompt(
            session_id=new.session_id, prompt=[TextContentBlock(type="text", text="ask me")]
        )
    return client, w, result


def _tool_result_update(client: FormClient) -> dict[str, Any]:
    done = [u for u in client.updates if u["sessionUpdate"] == "tool_call_update"]
    assert len(done) == 1
    return done[0]


async def test_an_accepted_form_answers_the_tool(world: WorldFactory) -> None:
    content = {"color": "red", "tags": ["a"], "q3": "no"}
    client, w, result = await _ask_once(
        world, AcceptElicitationResponse(action="accept", content=content)
    )
    assert result.stop_reason == "end_turn"
    [form] = client.forms
    assert form["toolCallId"] == "ask-1" and form["requestedSchema"]["properties"]["q3"]
    # The tool_call is on the wire before the form (the queue is drained first).
    turn = [u["sessionUpdate"] for u in client.updates][1:]  # after the command list
    assert turn[:1] == ["tool_call"]
    update = _tool_result_update(client)
    assert update["status"] == "completed"
    answer = {
        "answers": [
            {"id": "color", "selected": ["red"]},
            {"id": "tags", "selected": ["a"]},
            {"id": "q3", "selected": ["no"]},
        ]
    }
    assert json.loads(update["content"][0]["content"]["text"]) == answer
    tool_message = w.model_requests()[1]["messages"][-1]
    assert tool_message["role"] == "tool" and not tool_message["isError"]


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        (DeclineElicitationResponse(action="decline"), el.DECLINED),
        (CancelElicitationResponse(action="cancel"), el.CANCELLED),
    ],
)
async def test_decline_and_cancel_fail_the_tool_and_the_turn_goes_on(
    world: WorldFactory, answer: Any, text: str
) -> None:
    client, w, result = await _ask_once(world, answer)
    assert result.stop_reason == "end_turn"
    update = _tool_result_update(client)
    assert update["status"] == "failed"
    assert update["content"][0]["content"]["text"] == text
    assert len(w.model_requests()) == 2  # the model got the refusal and answered


async def test_a_cancelled_turn_withdraws_the_open_form(world: WorldFactory) -> None:
    w = world(llm=[{"tool_calls": [ASK]}])
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w, FORMS)
        turn = await agent.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "q"}]}
        )
        frames = []
        while not requests_of(frames, "elicitation/create"):
            frames.append(await agent.recv())
        [form] = requests_of(frames, "elicitation/create")
        started = asyncio.get_running_loop().time()
        await agent.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
        )
        answer, after = await exchange(agent, turn, timeout=3.0)
        elapsed = asyncio.get_running_loop().time() - started
    assert answer["result"] == {"stopReason": "cancelled"}
    assert elapsed < 2.0
    # The client is told to close the form, and the tool call ends failed.
    withdrawn = [f for f in after if f.get("method") == "$/cancel_request"]
    assert withdrawn == [
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": form["id"]}}
    ]
    assert kinds(after) == ["tool_call_update"]
    assert updates(after)[0]["status"] == "failed"


async def test_no_form_capability_no_tool(world: WorldFactory) -> None:
    w = world(llm=[{"text": "a"}, {"text": "b"}])
    async with raw_agent(w) as agent:
        for caps in (None, FORMS):
            session_id, _ = await open_session(agent, w, caps)
            await exchange(
                agent,
                await agent.request(
                    "session/prompt",
                    {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]},
                ),
            )
    offered = [[t["name"] for t in r.get("tools", [])] for r in w.model_requests()]
    assert offered == [[], [el.TOOL_NAME]]


async def test_a_client_that_stops_showing_forms_gets_no_form(world: WorldFactory) -> None:
    w = world(llm=[{"tool_calls": [ASK]}, {"text": "ok"}])
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w, FORMS)
        # The last initialize wins: this client no longer shows forms.
        await agent.call("initialize", {"protocolVersion": 1})
        answer, frames = await exchange(
            agent,
            await agent.request(
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": "q"}]},
            ),
        )
    assert answer["result"] == {"stopReason": "end_turn"}
    assert requests_of(frames, "elicitation/create") == []
    [done] = [u for u in updates(frames) if u["sessionUpdate"] == "tool_call_update"]
    assert done["status"] == "failed"
    assert done["content"][0]["content"]["text"] == el.NO_FORMS
