"""The dialect registry (`parity.fakellm.dialects`) is complete for every dialect.

Each test is parametrized over the registry, so a new dialect with a part missing fails
a test named after it: a sample call that its reader turns into the one shared canonical
request, routes the server answers and records under its name, the capture parts
(or their deliberate absence) matching the scenario schema and `parity capture`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from parity.cli.main import build_parser
from parity.fakellm.dialects import (
    CAPTURABLE,
    DIALECTS,
    PARITY_STREAM,
    ROUTES,
    canonical_request,
    dialect_of,
)
from parity.targets.spec import DIALECT_NAMES
from tests.support.fakellm import OpenRun

ROOT = Path(__file__).resolve().parents[2]
NAMES = list(DIALECTS)

RESULT = '{"ok":true}'
SAMPLES: dict[str, dict[str, Any]] = {
    "parity-stream": {
        "model": "m",
        "system": "be brief",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool-call", "id": "c1", "name": "echo", "arguments": {"x": 1}}
                ],
            },
            {"role": "tool", "toolCallId": "c1", "content": [{"type": "text", "text": RESULT}]},
        ],
        "tools": [{"name": "echo"}],
    },
    "openai-chat": {
        "model": "m",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "echo", "arguments": '{"x":1}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": RESULT},
        ],
        "tools": [{"type": "function", "function": {"name": "echo"}}],
    },
    "openai-responses": {
        "model": "m",
        "instructions": "be brief",
        "input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "c1", "name": "echo", "arguments": '{"x":1}'},
            {"type": "function_call_output", "call_id": "c1", "output": RESULT},
        ],
        "tools": [{"type": "function", "name": "echo"}],
    },
    "anthropic-messages": {
        "model": "m",
        "max_tokens": 100,
        "system": "be brief",
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "c1", "name": "echo", "input": {"x": 1}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "c1", "content": RESULT}],
            },
        ],
        "tools": [{"name": "echo"}],
    },
    "gemini": {
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {
                "role": "model",
                "parts": [{"functionCall": {"id": "c1", "name": "echo", "args": {"x": 1}}}],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"id": "c1", "name": "echo", "response": {"ok": True}}}
                ],
            },
        ],
        "tools": [{"functionDeclarations": [{"name": "echo"}]}],
    },
}
"""One conversation (a system prompt, a user text, a tool call and its result, one tool)
as each dialect's client would send it."""

CANONICAL = {
    "model": "m",
    "system": "be brief",
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool-call", "id": "c1", "name": "echo", "arguments": '{"x":1}'}],
        },
        {"role": "tool", "content": [{"type": "text", "text": RESULT}], "toolCallId": "c1"},
    ],
    "tools": [{"name": "echo", "description": "", "parameters": {}}],
}
"""What every dialect's sample says to the model."""


def served_paths(name: str) -> list[str]:
    """The dialect's routes as a client calls them (model `m` where the path names one)."""
    return [route.replace("{model}", "m") for route in DIALECTS[name].routes]


@pytest.mark.parametrize("name", NAMES)
def test_each_dialect_reads_the_shared_conversation_into_one_canonical_form(name: str) -> None:
    assert name in SAMPLES, f"{name}: add its sample call to SAMPLES"
    for path in served_paths(name):
        assert canonical_request(path, SAMPLES[name]) == CANONICAL, path


@pytest.mark.parametrize("name", NAMES)
def test_each_dialect_is_served_where_its_model_calls_are_recognized(name: str) -> None:
    dialect = DIALECTS[name]
    assert dialect.routes, f"{name}: no route serves it"
    for path in served_paths(name):
        assert dialect_of(path) == name, path
    for ending in dialect.calls:
        assert any(p.endswith(ending) for p in served_paths(name)), f"{name}: {ending} not served"
    if dialect.provider is None:
        assert dialect is PARITY_STREAM, f"{name}: no provider part (only parity-stream has none)"
    else:
        assert {r for r, route in ROUTES.items() if route.dialect == name} == set(dialect.routes)


@pytest.mark.parametrize("name", NAMES)
async def test_each_dialect_is_answered_and_recorded_under_its_name(
    name: str, open_run: OpenRun
) -> None:
    async with aiohttp.ClientSession() as http:
        for path in served_paths(name):
            run = open_run([{"text": "hello", "deltas": 5}])
            async with http.post(run.base_url + path, json=SAMPLES[name]) as response:
                assert response.status == 200, await response.text()
                assert "hello" in await response.text()
            (recorded,) = run.requests
            assert recorded.dialect == name
            assert canonical_request(recorded.path, recorded.body) == CANONICAL


def test_targets_may_declare_every_dialect() -> None:
    assert tuple(DIALECTS) == DIALECT_NAMES


@pytest.mark.parametrize("name", NAMES)
def test_the_docs_name_each_dialect_a_target_may_declare(name: str) -> None:
    targets_doc = (ROOT / "docs" / "targets.md").read_text(encoding="utf-8")
    (row,) = [line for line in targets_doc.splitlines() if line.startswith("| `dialect` |")]
    assert f"`{name}`" in row


def test_the_scenario_schema_names_the_capturable_dialects() -> None:
    """`captured.upstream_dialect` in parity/schema/scenario.schema.json."""
    schema = json.loads((ROOT / "parity/schema/scenario.schema.json").read_text(encoding="utf-8"))
    enum = schema["properties"]["captured"]["properties"]["upstream_dialect"]["enum"]
    assert enum == list(CAPTURABLE)


def test_parity_capture_offers_the_capturable_dialects() -> None:
    parser = build_parser()
    argv = ["capture", "--target", "plus", "--upstream", "u", "--api-key-env", "K"]
    argv += ["--model", "m", "--prompt", "p", "-o", "out.yaml"]
    assert parser.parse_args(argv).dialect in CAPTURABLE
    for name in NAMES:
        if name in CAPTURABLE:
            assert parser.parse_args([*argv, "--dialect", name]).dialect == name
        else:
            with pytest.raises(SystemExit):
                parser.parse_args([*argv, "--dialect", name])


@pytest.mark.parametrize("name", CAPTURABLE)
def test_the_capture_docs_name_each_capturable_dialect(name: str) -> None:
    capture_doc = (ROOT / "docs" / "capture.md").read_text(encoding="utf-8")
    (row,) = [line for line in capture_doc.splitlines() if line.startswith("| `--dialect D` |")]
    assert f"`{name}`" in row
