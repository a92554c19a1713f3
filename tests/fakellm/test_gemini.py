"""The Gemini API dialect read by the official `google-genai` SDK over loopback.

The SDK's sync client runs in a worker thread (`asyncio.to_thread`) while the fake
serves on the test's loop; the async client (`client.aio`, aiohttp transport) is used
where a stream is cut by the client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import aiohttp
import pytest
from google import genai
from google.genai import errors, types

from parity.fakellm import gemini
from parity.fakellm.run import Run
from tests.support.fakellm import OpenRun, aborted, wait_for

MODEL = "gemini-2.5-flash"
T = TypeVar("T")


def client(run: Run, version: str = "v1beta") -> genai.Client:
    options = types.HttpOptions(base_url=run.base_url, api_version=version)
    return genai.Client(api_key="sk-fake", http_options=options)


async def in_thread(run: Run, call: Callable[[genai.Client], T], version: str = "v1beta") -> T:
    """Run `call(client)` with a fresh sync client in a worker thread, then close it."""

    def work() -> T:
        with client(run, version) as api:
            return call(api)

    return await asyncio.to_thread(work)


def stream(api: genai.Client, **kwargs: Any) -> list[types.GenerateContentResponse]:
    return list(api.models.generate_content_stream(model=MODEL, contents="go", **kwargs))


def parts(chunks: list[types.GenerateContentResponse]) -> Iterator[types.Part]:
    for chunk in chunks:
        assert chunk.candidates is not None
        content = chunk.candidates[0].content
        assert content is not None and content.role == "model"
        yield from content.parts or []


def texts(chunks: list[types.GenerateContentResponse], *, thought: bool) -> list[str]:
    return [p.text for p in parts(chunks) if p.text is not None and bool(p.thought) == thought]


def declare(*names: str) -> types.GenerateContentConfig:
    declarations = [
        types.FunctionDeclaration(name=name, parameters_json_schema={"type": "object"})
        for name in names
    ]
    return types.GenerateContentConfig(tools=[types.Tool(function_declarations=declarations)])


async def test_stream_thought_and_text_parts_then_usage(open_run: OpenRun) -> None:
    run = open_run(
        [
            {
                "reasoning": "inspect first",
                "text": "héllo there",
                "deltas": 4,
                "usage": {"input": 8, "output": 5, "reasoning": 2},
            }
        ]
    )
    chunks = await in_thread(run, stream)
    assert texts(chunks, thought=True) == ["insp", "ect ", "firs", "t"]
    assert texts(chunks, thought=False) == ["héll", "o th", "ere"]
    last = chunks[-1]
    assert last.candidates is not None and last.candidates[0].finish_reason == "STOP"
    assert [c.candidates[0].finish_reason for c in chunks[:-1] if c.candidates] == [None] * 7
    usage = last.usage_metadata
    assert usage is not None
    assert (
        usage.prompt_token_count,
        usage.candidates_token_count,
        usage.thoughts_token_count,
        usage.total_token_count,
    ) == (8, 3, 2, 13)
    assert {c.model_version for c in chunks} == {MODEL}
    assert {c.response_id for c in chunks} == {"gemini-0"}
    rec = run.requests[0]
    assert (rec.dialect, rec.path, rec.entry) == (
        "gemini", f"/v1beta/models/{MODEL}:streamGenerateContent", 0,
    )  # fmt: skip
    assert rec.body["contents"] == [{"parts": [{"text": "go"}], "role": "user"}]


async def test_usage_without_reasoning(open_run: OpenRun) -> None:
    run = open_run([{"text": "ok", "usage": {"input": 3, "output": 1}}])
    chunks = await in_thread(run, stream)
    usage = chunks[-1].usage_metadata
    assert usage is not None and usage.thoughts_token_count is None
    assert (usage.prompt_token_count, usage.candidates_token_count) == (3, 1)
    assert usage.total_token_count == 4
    assert all(c.usage_metadata is None for c in chunks[:-1])


async def test_function_call_round_trip_with_function_response(open_run: OpenRun) -> None:
    run = open_run(
        [
            {
                "text": "calling",
                "tool_calls": [{"id": "call-7", "name": "echo", "arguments": {"q": [1, "é"]}}],
            },
            {"text": "done", "usage": {"input": 20, "output": 1}},
        ]
    )
    config = declare("mcp__parity__echo", "other")
    first = await in_thread(run, lambda api: stream(api, config=config))
    calls = [p.function_call for p in parts(first) if p.function_call is not None]
    assert [(c.id, c.name, c.args) for c in calls] == [
        ("call-7", "mcp__parity__echo", {"q": [1, "é"]})
    ]
    assert first[-1].candidates is not None and first[-1].candidates[0].finish_reason == "STOP"

    model_turn = types.Content(role="model", parts=list(parts(first)))
    result = types.Part.from_function_response(
        name="mcp__parity__echo", response={"output": "tool says hi"}
    )
    assert result.function_response is not None
    result.function_response.id = "call-7"
    history = [
        types.Content(role="user", parts=[types.Part.from_text(text="go")]),
        model_turn,
        types.Content(role="user", parts=[result]),
    ]
    second = await in_thread(
        run,
        lambda api: list(
            api.models.generate_content_stream(model=MODEL, contents=history, config=config)
        ),
    )
    assert texts(second, thought=False) == ["d", "o", "n", "e"]
    body = run.requests[1].body
    sent = body["contents"][2]["parts"][0]["functionResponse"]
    assert sent == {
        "id": "call-7",
        "name": "mcp__parity__echo",
        "response": {"output": "tool says hi"},
    }
    assert body["contents"][1]["parts"][-1]["functionCall"]["id"] == "call-7"
    view = gemini.view(body)
    assert view.has_tools and "tool says hi" in view.texts
    assert [r.entry for r in run.requests] == [0, 1]


async def test_generate_content_whole_response(open_run: OpenRun) -> None:
    run = open_run(
        [
            {
                "reasoning": "think",
                "text": "answer",
                "tool_calls": [
                    {"id": "c1", "name": "echo", "arguments": {"a": 1}},
                    {"name": "read", "arguments": "not json"},
                ],
                "usage": {"input": 4, "output": 6, "reasoning": 1},
            }
        ]
    )
    response = await in_thread(
        run,
        lambda api: api.models.generate_content(
            model=MODEL, contents="go", config=declare("echo", "read")
        ),
    )
    assert response.candidates is not None
    candidate = response.candidates[0]
    assert candidate.finish_reason == "STOP"
    assert candidate.content is not None and candidate.content.parts is not None
    thought, text, *_ = candidate.content.parts
    assert (thought.text, thought.thought, text.text, text.thought) == (
        "think",
        True,
        "answer",
        None,
    )
    assert [(c.id, c.name, c.args) for c in response.function_calls or []] == [
        ("c1", "echo", {"a": 1}),
        ("call-3", "read", {}),  # malformed scripted arguments cannot be an object
    ]
    usage = response.usage_metadata
    assert usage is not None
    assert (usage.candidates_token_count, usage.thoughts_token_count, usage.total_token_count) == (
        5, 1, 10,
    )  # fmt: skip
    assert run.requests[0].path == f"/v1beta/models/{MODEL}:generateContent"


@pytest.mark.parametrize("streaming", [True, False])
async def test_max_tokens_finish(open_run: OpenRun, streaming: bool) -> None:
    run = open_run([{"text": "cut short", "deltas": 20, "finish": "max-tokens"}])

    def call(api: genai.Client) -> types.GenerateContentResponse:
        if streaming:
            return stream(api)[-1]
        return api.models.generate_content(model=MODEL, contents="go")

    last = await in_thread(run, call)
    assert last.candidates is not None and last.candidates[0].finish_reason == "MAX_TOKENS"
    if not streaming:
        assert last.text == "cut short"


@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize(
    ("status", "name", "kind"),
    [(429, "RESOURCE_EXHAUSTED", errors.ClientError), (503, "UNAVAILABLE", errors.ServerError)],
)
async def test_scripted_error_with_status_is_api_error(
    open_run: OpenRun, streaming: bool, status: int, name: str, kind: type[errors.APIError]
) -> None:
    run = open_run([{"error": {"message": "slow down", "code": "QUOTA", "status": status}}])

    def call(api: genai.Client) -> object:
        if streaming:
            return stream(api)
        return api.models.generate_content(model=MODEL, contents="go")

    with pytest.raises(kind) as caught:
        await in_thread(run, call)
    error = caught.value
    assert (error.code, error.status, error.message) == (status, name, "slow down")
    assert error.details["error"]["details"][0]["reason"] == "QUOTA"
    assert run.requests[0].status == status and run.requests[0].entry == 0


async def test_error_mid_stream_raises_after_partial_text(open_run: OpenRun) -> None:
    run = open_run([{"text": "partial", "deltas": 0, "error": {"message": "provider blew up"}}])
    seen: list[str] = []

    def call(api: genai.Client) -> None:
        for chunk in api.models.generate_content_stream(model=MODEL, contents="go"):
            seen.append(chunk.text or "")

    with pytest.raises(errors.ServerError) as caught:
        await in_thread(run, call)
    assert seen == ["partial"]
    assert (caught.value.code, caught.value.status, caught.value.message) == (
        500, "INTERNAL", "provider blew up",
    )  # fmt: skip
    assert run.requests[0].status == 200


async def test_error_mid_stream_in_whole_request_is_http_500(open_run: OpenRun) -> None:
    run = open_run([{"text": "partial", "error": {"message": "provider blew up"}}])
    with pytest.raises(errors.ServerError, match="provider blew up") as caught:
        await in_thread(run, lambda api: api.models.generate_content(model=MODEL, contents="go"))
    assert caught.value.code == 500
    assert run.requests[0].status == 500


@pytest.mark.parametrize("streaming", [True, False])
async def test_script_exhausted_is_409(open_run: OpenRun, streaming: bool) -> None:
    run = open_run([{"text": "only one"}])

    def call(api: genai.Client) -> object:
        api.models.generate_content(model=MODEL, contents="go")
        if streaming:
            return stream(api)
        return api.models.generate_content(model=MODEL, contents="again")

    with pytest.raises(errors.ClientError) as caught:
        await in_thread(run, call)
    error = caught.value
    assert (error.code, error.status, error.message) == (409, "ABORTED", "script exhausted")
    assert error.details["error"]["details"][0]["reason"] == "PARITY_PROTOCOL"
    rec = run.requests[1]
    assert (rec.status, rec.problem, rec.entry) == (409, "script exhausted", None)


async def test_count_tokens_consumes_nothing(open_run: OpenRun) -> None:
    run = open_run([{"text": "first"}])

    def call(api: genai.Client) -> tuple[types.CountTokensResponse, str | None]:
        counted = api.models.count_tokens(model=MODEL, contents="twelve chars")
        return counted, api.models.generate_content(model=MODEL, contents="go").text

    counted, text = await in_thread(run, call)
    assert counted.total_tokens == 3
    assert text == "first"
    rec = run.requests[0]
    assert (rec.dialect, rec.path, rec.entry) == (
        "gemini",
        f"/v1beta/models/{MODEL}:countTokens",
        None,
    )
    assert run.requests[1].entry == 0


async def test_models_list_and_get_from_the_catalog(open_run: OpenRun) -> None:
    run = open_run([])

    def call(api: genai.Client) -> tuple[list[types.Model], types.Model]:
        return list(api.models.list()), api.models.get(model="mock")

    listed, got = await in_thread(run, call)
    assert [m.name for m in listed] == ["models/mock"]
    assert got.display_name == "Mock Reasoner" and got.input_token_limit == 1024
    assert got.thinking is True
    assert "generateContent" in (got.supported_actions or [])
    with pytest.raises(errors.ClientError) as caught:
        await in_thread(run, lambda api: api.models.get(model="nope"))
    assert (caught.value.code, caught.value.status) == (404, "NOT_FOUND")
    assert [r.dialect for r in run.requests] == ["gemini"] * 3


async def test_v1_routes(open_run: OpenRun) -> None:
    run = open_run([{"text": "via v1"}, {"text": "streamed", "deltas": 20}])

    def call(api: genai.Client) -> tuple[str | None, list[str], list[types.Model]]:
        whole = api.models.generate_content(model=MODEL, contents="go").text
        return whole, texts(stream(api), thought=False), list(api.models.list())

    whole, streamed, listed = await in_thread(run, call, version="v1")
    assert (whole, streamed) == ("via v1", ["streamed"])
    assert [m.name for m in listed] == ["models/mock"]
    assert [r.path for r in run.requests] == [
        f"/v1/models/{MODEL}:generateContent",
        f"/v1/models/{MODEL}:streamGenerateContent",
        "/v1/models",
    ]
    assert [r.dialect for r in run.requests] == ["gemini"] * 3


async def test_v1_models_without_google_headers_stays_openai(open_run: OpenRun) -> None:
    run = open_run([])
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{run.base_url}/v1/models") as response:
            body = await response.json()
        async with http.get(f"{run.base_url}/v1/models/mock") as response:
            assert response.status == 404
    assert body["object"] == "list" and body["data"][0]["id"] == "mock"
    assert [r.dialect for r in run.requests] == ["openai-chat", "other"]


async def test_side_request_by_system_instruction_and_tools(open_run: OpenRun) -> None:
    run = open_run(
        [
            {"text": "main"},
            {"match": {"contains": "Summarize"}, "text": "S"},
            {"match": {"tools": "none"}, "text": "title"},
        ]
    )

    def call(api: genai.Client) -> list[str | None]:
        side = api.models.generate_content(
            model=MODEL,
            contents="go",
            config=types.GenerateContentConfig(system_instruction="Summarize the chat"),
        )
        title = api.models.generate_content(model=MODEL, contents="go")
        main = api.models.generate_content(model=MODEL, contents="go", config=declare("echo"))
        return [side.text, title.text, main.text]

    assert await in_thread(run, call) == ["S", "title", "main"]
    assert [(r.side, r.entry) for r in run.requests] == [(True, None), (True, None), (False, 0)]


async def test_malformed_body_is_409(open_run: OpenRun) -> None:
    run = open_run([{"text": "never"}])
    async with aiohttp.ClientSession() as http:
        url = f"{run.base_url}/v1beta/models/{MODEL}:generateContent"
        async with http.post(url, json={"messages": []}) as response:
            body = await response.json()
            assert response.status == 409
    assert body["error"]["message"] == "malformed request: `contents` must be a list"
    assert run.script.used == 0


async def test_hang_then_client_close_is_recorded_aborted(open_run: OpenRun) -> None:
    run = open_run([{"text": "partial", "deltas": 0, "then": "hang"}])
    async with client(run).aio as api:
        chunks = await api.models.generate_content_stream(model=MODEL, contents="go")
        first = await anext(chunks)
        assert first.text == "partial"
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(chunks), 0.2)
        await chunks.aclose()  # type: ignore[attr-defined]
    await wait_for(aborted(run))


def test_stream_renderer_sends_calls_whole() -> None:
    """Raw chunks: argument fragments are joined, a call whose block never ends is sent
    with the finish, and a non-object argument JSON becomes `{}`."""
    chunks: list[dict[str, Any]] = [
        {"type": "block-start", "index": 0, "blockType": "tool-call"},
        {
            "type": "tool-call-delta",
            "index": 0,
            "id": "a",
            "name": "echo",
            "argumentsDelta": '{"x"',
        },
        {"type": "tool-call-delta", "index": 0, "argumentsDelta": ":1}"},
        {
            "type": "block-end",
            "index": 0,
            "block": {"type": "tool-call", "id": "a", "name": "echo"},
        },
        {"type": "block-start", "index": 1, "blockType": "tool-call"},
        {"type": "tool-call-delta", "index": 1, "name": "read", "argumentsDelta": "[1]"},
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    ]
    wire = gemini.render_stream(chunks, ident="gemini-0", model="m")
    assert [bool(part) for part in wire.parts] == [False, False, False, True, False, False, True]
    assert b'"functionCall":{"id":"a","name":"echo","args":{"x":1}}' in wire.parts[3]
    assert b'"functionCall":{"name":"read","args":{}}' in wire.parts[6]
    assert b'"finishReason":"STOP"' in wire.parts[6]
