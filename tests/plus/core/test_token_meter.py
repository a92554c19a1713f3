"""Native 0.2.1-rc.2's token meter, ported: checked against what the live native said.

Each case takes a shipped native recording: its model view holds the request native sent,
the scenario's script the answer, and its `usage_update` what native's meter read after
that step. The port must read the same number from the same request and answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from acp_plus.core.history import usage_tokens
from acp_plus.core.token_meter import block_tokens, request_tokens, used
from parity.view.dump import load_view

REPO = Path(__file__).resolve().parents[3]
# The workdir a native run had: fixed-length run paths (parity.driver.stale), so the
# `<workdir>` token stands for a path of this length in every recording.
WORKDIR = "/tmp/parity-p0000000n0000000000-p0000000r000000-xxxxxxxx/workdir"


def _real(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("<workdir>", WORKDIR)
    if isinstance(value, list):
        return [_real(v) for v in value]
    if isinstance(value, dict):
        return {k: _real(v) for k, v in value.items()}
    return value


def _last_step(scenario: str) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any], int]:
    view = load_view((REPO / "snapshots" / scenario / "native.yaml").read_text(encoding="utf-8"))
    requests = [m["body"] for m in view["model"] if m.get("path") == "/stream"]
    readings = [
        u["used"]
        for step in view["steps"]
        for u in step.get("updates") or ()
        if u.get("sessionUpdate") == "usage_update"
    ]
    script = yaml.safe_load((REPO / "scenarios" / f"{scenario}.yaml").read_text())["llm"]
    entry = script[len(requests) - 1]
    answer = [{"type": "text", "text": entry["text"]}]
    usage = {"inputTokens": entry["usage"]["input"], "outputTokens": entry["usage"]["output"]}
    return _real(requests[-1]), answer, usage, readings[-1]


@pytest.mark.parametrize(
    "scenario", ["baseline/text-exchange", "sessions/config-options", "increments/modes"]
)
def test_the_port_reads_what_native_read(scenario: str) -> None:
    request, answer, usage, native_said = _last_step(scenario)
    estimate = request_tokens(
        request.get("system"), request.get("tools") or [], request["messages"], answer
    )
    assert used(usage, estimate) == native_said


def test_the_density_and_the_overheads() -> None:
    assert block_tokens({"type": "text", "text": "abcde"}) == 2 + 4
    assert block_tokens({"type": "text", "text": "\U0001f600"}) == 1 + 4  # two UTF-16 units
    assert block_tokens({"type": "tool-call", "name": "echo", "arguments": "{}"}) == 1 + 1 + 4
    # {"type":"image","mimeType":"image/png"}: 40 characters of JSON
    assert block_tokens({"type": "image", "mimeType": "image/png"}) == 10 + 4
    assert request_tokens("abcd", [], [], []) == 1 + 4
    assert request_tokens(None, [], [{"content": []}], []) == 4
    assert request_tokens(None, [{"name": "a"}], [], []) == 4 + 4  # [{"name":"a"}]: 14


def test_the_provider_count_wins_when_it_is_larger() -> None:
    usage = {"inputTokens": 900, "cacheReadTokens": 50, "outputTokens": 60, "reasoningTokens": 9}
    assert usage_tokens(usage) == 1010
    assert used(usage, 1000) == 1010
    assert used(usage, 1011) == 1011
