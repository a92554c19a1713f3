"""A run gets exactly its scenario's built-in tool families, on native and on acp-plus:
the tools the model is shown (sorted by name, fixture tools among them) and the
guidance in its system prompt. Live: native where it runs here (`make test LIVE=native`)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from parity.config.project import load_config
from parity.engine.postrun import normalized
from parity.engine.runner import Runner
from parity.scenario.load import build_scenario

REPO = Path(__file__).resolve().parents[2]
GUIDE = {
    "bash": "Check the [exit code: N] marker",
    "fs-search": "Use the glob tool",
    "jobs": "Track every background job id",
    "web": "web_search results are external",
}


def _model_view(target: str, families: str, tmp_path: Path) -> dict[str, Any]:
    text = textwrap.dedent(
        f"""\
        description: which tools and guidance a run's families give the model
        targets: [native, plus]
        builtin_tools: {families}
        tools: [{{name: cat, description: c, result: ok}}]
        llm: [{{text: hello}}]
        steps:
          - initialize: {{}}
          - new_session: {{as: s1}}
          - prompt: {{session: s1, text: hi}}
        """
    )
    scenario = build_scenario(text, tmp_path / "scenarios" / "families.yaml")
    with Runner(load_config(REPO)) as runner:
        why = runner.unavailable(target)
        if why is not None:
            pytest.skip(f"{target} cannot run here: {why}")
        view = normalized(scenario, runner.execute(scenario, target))
    body: dict[str, Any] = next(m["body"] for m in view["model"] if m.get("body"))
    return body


def test_native_mounts_exactly_the_named_families(tmp_path: Path) -> None:
    body = _model_view("native", "[jobs, fs-search, bash]", tmp_path)
    names = [t["name"] for t in body["tools"]]
    assert names == ["bash", "cat", "glob", "grep", "job_kill", "job_list", "job_output"]
    system = body["system"]
    at = [system.index(GUIDE[f]) for f in ("bash", "fs-search", "jobs")]
    assert at == sorted(at) and GUIDE["web"] not in system


def test_native_without_families_shows_only_the_fixture_tools(tmp_path: Path) -> None:
    body = _model_view("native", "[]", tmp_path)
    assert [t["name"] for t in body["tools"]] == ["cat"]
    assert body["system"].endswith("You are a coding agent powered by the mock model.")


def test_acp_plus_offers_its_families_and_nothing_for_the_rest(tmp_path: Path) -> None:
    body = _model_view("plus", "[web, fs]", tmp_path)
    assert [t["name"] for t in body["tools"]] == ["cat", "edit", "read", "read_image", "write"]
    assert GUIDE["web"] not in body["system"]
