"""The fake standing in for a provider that requires an API key (`open_run(api_key=...)`).

A model call without the run's key gets 401 in the dialect's error shape, as from a
real provider, and uses up no script entry; a run without a key accepts anything.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import aiohttp
import anthropic
import openai
import pytest

from parity.fakellm.run import Run
from parity.fakellm.server import FakeLLM
from parity.scenario.model import DEFAULT_CATALOG

KEY = "sk-provider-5f1e2d3c4b5a"
CHAT: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
MESSAGES: dict[str, Any] = {
    "model": "m",
    "max_tokens": 10,
    "messages": [{"role": "user", "content": "go"}],
}

OpenKeyed = Callable[..., Run]


@pytest.fixture
def open_keyed(fake: FakeLLM) -> OpenKeyed:
    """`open_keyed(api_key, llm=None)`: a run answering `ok` (by default) behind `api_key`."""
    counter = itertools.count()

    def _open(api_key: str | None, llm: list[dict[str, Any]] | None = None) -> Run:
        return fake.open_run(
            f"k{next(counter)}",
            llm=llm or [{"text": "ok"}],
            tools=[],
            catalog=DEFAULT_CATALOG,
            api_key=api_key,
        )

    return _open


async def post(
    run: Run, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{run.base_url}{path}", json=body, headers=headers or {}) as response,
    ):
        return response.status, await response.json()


# -- OpenAI chat --------------------------------------------------------------------------


async def test_chat_without_a_key_is_401_missing_key(open_keyed: OpenKeyed) -> None:
    run = open_keyed(KEY)
    status, body = await post(run, "/v1/chat/completions", CHAT)
    assert status == 401
    assert body == {
        "error": {
            "message": "missing API key",
            "type": "authentication_error",
            "param": None,
            "code": "authentication_error",
        }
    }
    rec = run.requests[-1]
    assert (rec.status, rec.problem, rec.dialect) == (401, "missing API key", "openai-chat")
    assert run.script.used == 0


async def test_chat_with_a_wrong_bearer_key_is_401_invalid_key(open_keyed: OpenKeyed) -> None:
    run = open_keyed(KEY)
    status, body = await post(
        run, "/v1/chat/completions", CHAT, {"Authorization": "Bearer sk-wrong"}
    )
    assert status == 401
    assert body["error"]["message"] == "invalid API key: sk-wrong"
    assert run.requests[-1].problem == "invalid API key: sk-wrong"
    assert run.requests[-1].status == 401


async def test_chat_sdk_sees_an_authentication_error(open_keyed: OpenKeyed) -> None:
    run = open_keyed(KEY)
    async with openai.AsyncOpenAI(
        base_url=f"{run.base_url}/v1", api_key="sk-wrong", max_retries=0
    ) as api:
        with pytest.raises(openai.AuthenticationError) as caught:
            await api.chat.completions.create(**CHAT)
    assert caught.value.status_code == 401
    assert "invalid API key: sk-wrong" in caught.value.message


async def test_chat_with_the_right_key_is_answered(open_keyed: OpenKeyed) -> None:
    run = open_keyed(KEY)
    async with openai.AsyncOpenAI(base_url=f"{run.base_url}/v1", api_key=KEY, max_retries=0) as api:
        got = await api.chat.completions.create(**CHAT)
    assert got.choices[0].message.content == "ok"
    rec = run.requests[-1]
    assert (rec.status, rec.problem, rec.entry) == (200, None, 0)


async def test_a_refused_call_uses_up_no_entry(open_keyed: OpenKeyed) -> None:
    run = open_keyed(KEY, [{"text": "first"}, {"text": "second"}])
    status, _ = await post(run, "/v1/chat/completions", CHAT, {"Authorization": "Bearer nope"})
    assert status == 401
    status, body = await post(run, "/v1/chat/completions", CHAT, {"Authorization": f"Bearer {KEY}"})
    assert status == 200
    assert body["choices"][0]["message"]["content"] == "first"


async def test_bearer_scheme_is_case_insensitive(open_keyed: OpenKeyed) -> None:
    run = open_keyed(KEY)
    status, _ = await post(run, "/v1/chat/completions", CHAT, {"Authorization": f"bearer {KEY}"})
    assert status == 200


async def test_a_key_without_the_bearer_scheme_is_missing(open_keyed: OpenKeyed) -> None:
    run = open_keyed(KEY)
    status, body = await post(run, "/v1/chat/completions", CHAT, {"Authorization": KEY})
    assert status == 401
    assert body["error"]["message"] == "missing API key"


# -- Anthropic messages -------------------------------------------------------------------


async def test_messages_with_the_right_x_api_key_is_answered(open_keyed: OpenKeyed) -> None:
    run = open_keyed(KEY)
    async with anthropic.AsyncAnthropic(base_url=run.base_url, api_key=KEY, max_retries=0) as api:
        got = await api.messages.create(**MESSAGES)
    block = got.content[0]
    assert block.type == "text" and block.text == "ok"
    assert run.requests[-1].status == 200


async def test_messages_with_a_wrong_x_api_key_is_401(open_keyed: OpenKeyed) -> None:
    run = open_keyed(KEY)
    status, body = await post(run, "/v1/messages", MESSAGES, {"x-api-key": "sk-ant-wrong"})
    assert status == 401
    assert body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid API key: sk-ant-wrong"},
    }
    assert run.requests[-1].problem == "invalid API key: sk-ant-wrong"


async def test_messages_sdk_sees_an_authentication_error(open_keyed: OpenKeyed) -> None:
    run = open_keyed(KEY)
    async with anthropic.AsyncAnthropic(
        base_url=run.base_url, api_key="sk-ant-wrong", max_retries=0
    ) as api:
        with pytest.raises(anthropic.AuthenticationError) as caught:
            await api.messages.create(**MESSAGES)
    assert caught.value.status_code == 401
    assert "invalid API key: sk-ant-wrong" in caught.value.message


async def test_messages_without_a_key_is_401_missing_key(open_keyed: OpenKeyed) -> None:
    run = open_keyed(KEY)
    status, body = await post(run, "/v1/messages", MESSAGES)
    assert status == 401
    assert body["error"] == {"type": "authentication_error", "message": "missing API key"}


# -- Gemini -------------------------------------------------------------------------------


async def test_gemini_x_goog_api_key(open_keyed: OpenKeyed) -> None:
    run = open_keyed(KEY)
    path = "/v1beta/models/gemini-test:generateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "go"}]}]}
    status, _ = await post(run, path, body, {"x-goog-api-key": "wrong"})
    assert status == 401
    assert run.requests[-1].problem == "invalid API key: wrong"
    status, _ = await post(run, path, body, {"x-goog-api-key": KEY})
    assert status == 200
    status, _ = await post(run, f"{path}?key={KEY}", body)  # Gemini's query parameter
    assert (status, run.requests[-1].problem) == (409, "script exhausted")  # past the key


# -- no key -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer anything"}, {"x-api-key": "whatever"}],
)
async def test_a_run_without_api_key_accepts_anything(
    open_keyed: OpenKeyed, headers: dict[str, str]
) -> None:
    run = open_keyed(None, [{"text": "one"}, {"text": "two"}])
    status, body = await post(run, "/v1/chat/completions", CHAT, headers)
    assert status == 200
    assert body["choices"][0]["message"]["content"] == "one"
    status, body = await post(run, "/v1/messages", MESSAGES, headers)
    assert status == 200
    assert body["content"][0]["text"] == "two"
    assert [r.problem for r in run.requests] == [None, None]
