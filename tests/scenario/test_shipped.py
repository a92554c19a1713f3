"""The scenarios shipped in scenarios/: all valid, described, and true to the contract."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parity.cli.validate import validate_paths
from parity.fakellm.script import build_response
from parity.scenario.load import discover, load_scenario, scenario_name
from parity.scenario.model import Scenario

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = discover(ROOT / "scenarios")
HEADER = "# yaml-language-server: $schema=../../parity/schema/scenario.schema.json\n"


def load(name: str) -> Scenario:
    return load_scenario(ROOT / "scenarios" / f"{name}.yaml", ROOT)


def test_discover_finds_every_group_sorted() -> None:
    assert sorted(SHIPPED) == SHIPPED  # by path: `a-b.yaml` sorts before `a.yaml`
    names = [scenario_name(p, ROOT) for p in SHIPPED]
    assert {n.split("/")[0] for n in names} == {
        "approvals",
        "baseline",
        "captured",
        "hooks",
        "context",
        "increments",
        "peers",
        "protocol",
        "providers",
        "sessions",
        "tools",
    }
    assert len(names) >= 30


@pytest.mark.parametrize("path", SHIPPED, ids=[scenario_name(p, ROOT) for p in SHIPPED])
def test_shipped_scenario_loads_clean(path: Path) -> None:
    assert validate_paths([path]) == []  # no errors and no warnings
    scenario = load_scenario(path, ROOT)
    assert scenario.name == path.relative_to(ROOT / "scenarios").with_suffix("").as_posix()
    assert scenario.description.strip()
    assert path.read_text().startswith(HEADER)
    assert scenario.steps[0].kind == "initialize"


def test_baseline_holds_the_six_seed_scenarios_on_the_dsh_pair() -> None:
    names = {scenario_name(p, ROOT) for p in SHIPPED if "baseline" in p.parts}
    assert names == {
        "baseline/handshake",
        "baseline/text-exchange",
        "baseline/max-tokens",
        "baseline/reasoning-tool-usage",
        "baseline/cancel-mid-stream",
        "baseline/provider-failure",
    }
    for name in names:
        scenario = load(name)
        assert scenario.targets == ["native", "plus", "native-rc8"]
        assert scenario.compare == "exact"
    assert [s.kind for s in load("baseline/handshake").steps] == ["initialize"]


def text_block(kind: str, text: str, deltas: list[str], close: bool = True) -> list[Any]:
    chunks: list[Any] = [{"type": "block-start", "index": 0, "blockType": kind}]
    chunks += [{"type": f"{kind}-delta", "index": 0, "text": d} for d in deltas]
    if close:
        chunks.append({"type": "block-end", "index": 0, "block": {"type": kind, "text": text}})
    return chunks


def finish(kind: str, **failure: str) -> dict[str, Any]:
    reason: dict[str, Any] = {"kind": kind}
    if failure:
        reason["failure"] = failure
    return {"type": "finish", "reason": reason}


def text_response(t: str) -> list[Any]:
    usage = {"type": "usage", "usage": {"inputTokens": 5, "outputTokens": len(t)}}
    return [*text_block("text", t, list(t)), usage, finish("stop")]


# docs/contract.md §7.2: the chunk lists of the native parity suite's script helpers.
SCRIPTS: dict[str, list[list[Any]]] = {
    "baseline/text-exchange": [text_response("hello there")],
    "baseline/max-tokens": [
        [*text_block("text", "cut short", list("cut short")), finish("max-tokens")]
    ],
    "baseline/reasoning-tool-usage": [
        [
            *text_block("reasoning", "inspect first", ["inspect first"]),
            {"type": "block-start", "index": 1, "blockType": "tool-call"},
            {
                "type": "tool-call-delta",
                "index": 1,
                "id": "call-1",
                "name": "echo",
                "argumentsDelta": "{}",
            },
            {
                "type": "block-end",
                "index": 1,
                "block": {"type": "tool-call", "id": "call-1", "name": "echo", "arguments": "{}"},
            },
            {"type": "usage", "usage": {"inputTokens": 8, "outputTokens": 2, "reasoningTokens": 1}},
            finish("tool-calls"),
        ],
        text_response("done"),
    ],
    "baseline/cancel-mid-stream": [text_block("text", "partial", ["partial"], close=False)],
    "baseline/provider-failure": [
        [
            *text_block("text", "partial", ["partial"], close=False),
            finish("error", message="provider blew up", code="PROVIDER_ERROR"),
        ]
    ],
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_baseline_scripts_stream_the_contract_chunks(name: str) -> None:
    responses = [build_response(entry.params) for entry in load(name).llm]
    assert [list(r.chunks) for r in responses] == SCRIPTS[name]
    assert [r.hang for r in responses] == [name == "baseline/cancel-mid-stream"] * len(responses)


def test_reasoning_tool_usage_declares_the_echo_tool() -> None:
    (tool,) = load("baseline/reasoning-tool-usage").tools
    assert (tool.name, tool.parameters, tool.content) == (
        "echo",
        {"type": "object", "properties": {}},
        [{"type": "text", "text": "tool result"}],
    )


def test_peer_scenarios_compare_semantically_on_third_party_targets() -> None:
    for path in SHIPPED:
        if "peers" in path.parts:
            scenario = load_scenario(path, ROOT)
            assert scenario.compare == "semantic"
            assert "native" not in scenario.targets and "plus" not in scenario.targets
