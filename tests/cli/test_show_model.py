"""`parity show` leaves the model requests out; `--model` prints only them, each distinct
tool list once (then `tools: same as model[i]`)."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from parity.view.model_view import model_requests, model_view, without_model
from tests.support.project import AGENT, Project, mini_target

ECHO = {"name": "echo", "description": "Echo.", "parameters": {"type": "object"}}
MORE = {"name": "more", "description": "More.", "parameters": {"type": "object"}}

THREE_PROMPTS = """\
description: three text turns; the agent sends tool schemas with every request
targets: [tools]
llm:
  - text: one
  - text: two
  - text: three
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: first}
  - prompt: {session: s1, text: second}
  - prompt: {session: s1, text: more please}
"""


def tools_agent(tmp_path: Path) -> Path:
    """The mini agent, sending [echo] with every request, and [echo, more] when the
    prompt says `more`."""
    source = AGENT.read_text()
    assert source.count('"tools": [],') == 1
    agent = tmp_path / "tools_agent.py"
    agent.write_text(
        source.replace(
            '"tools": [],',
            f'"tools": [{ECHO!r}] + ([{MORE!r}] if "more" in text else []),',
        )
    )
    return agent


def test_show_leaves_model_out_and_model_prints_only_it(project: Project, tmp_path: Path) -> None:
    project.write(
        "parity.toml",
        (project.root / "parity.toml").read_text() + mini_target("tools", tools_agent(tmp_path)),
    )
    project.write("scenarios/demo/tools.yaml", THREE_PROMPTS)

    plain = project.parity("show", "demo/tools", "tools")
    assert plain.returncode == 0, plain.stderr
    view = yaml.safe_load(plain.stdout)
    assert "steps" in view and "process" in view
    assert "model" not in view

    done = project.parity("show", "demo/tools", "tools", "--model")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# demo/tools on tools\nmodel:\n")
    shown = yaml.safe_load(done.stdout)  # the findings are YAML comments
    assert list(shown) == ["model"]
    requests = shown["model"]
    assert [r["path"] for r in requests] == ["/stream"] * 3
    assert requests[0]["body"]["tools"] == [ECHO]
    assert requests[1]["body"]["tools"] == "same as model[0]"
    assert requests[2]["body"]["tools"] == [ECHO, MORE]  # a different list: in full
    assert requests[1]["body"]["messages"][0]["content"][0]["text"] == "second"
    assert done.stdout.count("name: echo") == 2
    assert "    tools: same as model[0]" in done.stdout.splitlines()


def test_model_side_by_side(project: Project) -> None:
    done = project.parity("show", "demo/text", "mini", "mini-b", "--model", "--width", "40")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["mini", "mini-b"]
    assert any(line.startswith("model:") for line in lines[2:])
    assert not any(line.startswith("steps:") for line in lines)


def test_model_requests_reference_the_first_request_with_those_tools() -> None:
    view = {
        "steps": [],
        "model": [
            {"path": "/catalog", "method": "GET", "body": None},
            {"path": "/stream", "body": {"messages": ["a"], "tools": [ECHO]}},
            {"path": "/stream", "body": {"messages": ["b"], "tools": [ECHO, MORE]}},
            {"path": "/stream", "body": {"messages": ["c"], "tools": [ECHO]}},
            {"path": "/stream", "body": {"messages": ["d"], "tools": []}},
            {"path": "/stream", "body": {"messages": ["e"], "tools": [ECHO, MORE]}},
        ],
    }
    before = copy.deepcopy(view)
    out = model_requests(view)
    assert [r["body"] and r["body"]["tools"] for r in out] == [
        None,
        [ECHO],
        [ECHO, MORE],
        "same as model[1]",
        [],  # an empty list is nothing to share
        "same as model[2]",
    ]
    assert list(out[3]["body"]) == ["messages", "tools"]  # key order kept
    assert view == before  # the view itself is untouched
    assert model_view(view) == {"model": out}
    assert without_model(view) == {"steps": []}
    assert model_requests({"steps": []}) == [] and model_view({}) == {"model": []}
