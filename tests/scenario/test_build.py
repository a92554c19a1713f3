"""Valid files become typed Scenarios; names, discovery and the schema itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from parity.scenario.load import discover, load_scenario, scenario_name
from parity.scenario.model import DEFAULT_CATALOG, Rule, Step, Tool, Where
from parity.scenario.schema_findings import SCHEMA_PATH, UPDATE_KINDS, schema

FULL = """\
description: everything at once
targets: [plus, native]
compare: semantic
diverge:
  - {path: "*.usage_update.used", reason: meters differ, targets: [native]}
masks:
  - {path: "steps[0].result.agentInfo", reason: names differ}
tools:
  - name: echo
    result: tool result
  - name: slow
    description: takes long
    content: [{type: text, text: a}]
    is_error: true
    delay_ms: 50
    approval: ask
files:
  notes.txt: "hello\\n"
llm:
  - text: hi
timeouts: {startup: 5, run: 30}
client:
  permission: {by_tool: {slow: allow-once}, default: reject-once}
steps:
  - initialize:
  - new_session: {as: s1}
  - parallel:
      - prompt: {session: s1, text: one}
      - send_raw: "[1]"
  - restart:
"""


def write(tmp_path: Path, rel: str, text: str) -> Path:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_full_file_becomes_typed_scenario(tmp_path: Path) -> None:
    path = write(tmp_path, "scenarios/group/full.yaml", FULL)
    s = load_scenario(path, tmp_path)
    assert (s.name, s.path, s.targets, s.compare) == (
        "group/full",
        path,
        ["plus", "native"],
        "semantic",
    )
    assert s.diverge == [
        Rule("*.usage_update.used", "meters differ", ["native"], Where(str(path), 5, 5))
    ]
    assert s.masks == [
        Rule("steps[0].result.agentInfo", "names differ", None, Where(str(path), 7, 5))
    ]
    assert s.tools == [
        Tool(
            "echo",
            "",
            {"type": "object", "properties": {}},
            [{"type": "text", "text": "tool result"}],
        ),
        Tool(
            "slow",
            "takes long",
            {"type": "object", "properties": {}},
            [{"type": "text", "text": "a"}],
            True,
            50,
            False,
            "ask",
        ),
    ]
    assert s.files == {"notes.txt": "hello\n"}
    assert [(e.params, e.where.line) for e in s.llm] == [({"text": "hi"}, 20)]
    assert s.timeouts == {"startup": 5.0, "run": 30.0}
    assert s.client == {"permission": {"by_tool": {"slow": "allow-once"}, "default": "reject-once"}}
    assert s.catalog == DEFAULT_CATALOG and s.catalog is not DEFAULT_CATALOG
    assert s.warnings == []


def test_steps_keep_their_params_and_place(tmp_path: Path) -> None:
    path = write(tmp_path, "scenarios/full.yaml", FULL)
    steps = load_scenario(path, tmp_path).steps
    w = str(path)
    assert steps == [
        Step("initialize", {}, Where(w, 25, 5)),
        Step("new_session", {"as": "s1"}, Where(w, 26, 5)),
        Step(
            "parallel",
            {
                "steps": [
                    Step("prompt", {"session": "s1", "text": "one"}, Where(w, 28, 9)),
                    Step("send_raw", {"line": "[1]"}, Where(w, 29, 9)),
                ]
            },
            Where(w, 27, 5),
        ),
        Step("restart", {}, Where(w, 30, 5)),
    ]


def test_minimal_file_gets_the_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, "x.yaml", "description: d\nsteps: [{initialize: {}}]\n")
    s = load_scenario(path)
    assert (s.name, s.targets, s.compare, s.catalog) == (
        "x",
        ["native", "plus", "native-rc8"],
        "exact",
        DEFAULT_CATALOG,
    )
    assert (s.tools, s.llm, s.files, s.client, s.timeouts, s.diverge, s.masks) == (
        [],
        [],
        {},
        {},
        {},
        [],
        [],
    )


def test_scenario_name_accepts_project_root_scenarios_dir_or_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, "scenarios/a/b.yaml", "")
    assert scenario_name(path, tmp_path) == "a/b"
    assert scenario_name(path, tmp_path / "scenarios") == "a/b"
    assert scenario_name(path) == "a/b"
    assert scenario_name(tmp_path / "elsewhere" / "c.yaml", tmp_path / "scenarios") == "c"


def test_discover_lists_yaml_below_scenarios_sorted(tmp_path: Path) -> None:
    for rel in ("scenarios/b/z.yaml", "scenarios/a.yaml", "scenarios/b/a.yml", "other/c.yaml"):
        write(tmp_path, rel, "")
    scenarios = tmp_path / "scenarios"
    assert discover(scenarios) == [scenarios / "a.yaml", scenarios / "b/z.yaml"]
    assert discover(tmp_path / "missing") == []


def test_schema_is_valid_draft_2020_12_and_on_disk() -> None:
    loaded = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(loaded)
    assert loaded["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema() == loaded


def test_schema_describes_every_top_level_key_and_step_kind() -> None:
    s = schema()
    defs: dict[str, Any] = s["$defs"]
    undocumented = [
        k for k, v in s["properties"].items() if "description" not in v and "$ref" not in v
    ]
    undocumented += [k for k, v in defs["step"]["properties"].items() if "description" not in v]
    assert undocumented == []
    assert "description" in defs["client"]


def test_update_kinds_come_from_the_schema() -> None:
    assert tuple(schema()["$defs"]["updateKind"]["enum"]) == UPDATE_KINDS
    assert "agent_message_chunk" in UPDATE_KINDS and "tool_call_update" in UPDATE_KINDS


def test_reference_doc_mentions_every_key_of_the_schema() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "scenarios.md").read_text()
    defs = schema()["$defs"]
    keys = set(schema()["properties"])
    for name in ("step", "tool", "llmEntry", "client", "toolCall", "rule"):
        keys |= set(defs[name]["properties"])
    for step in defs["step"]["properties"].values():
        keys |= set(step.get("properties", {}))
    keys |= set(defs["llmEntry"]["properties"]["match"]["properties"])
    missing = sorted(k for k in keys if f"`{k}" not in doc and f"{k}:" not in doc)
    assert missing == []


def test_a_scenario_calls_builtin_tools_only_when_its_script_says_so(tmp_path: Path) -> None:
    """`calls_builtin_tools` decides whether DSH-family targets show the model their own
    tools in the run (docs/native.md, "The model's view")."""
    base = "description: d\nsteps:\n  - initialize:\n"
    plain = write(tmp_path, "scenarios/g/plain.yaml", base + "llm:\n  - text: hi\n")
    fixture = write(
        tmp_path,
        "scenarios/g/fixture.yaml",
        base + "tools:\n  - {name: echo, result: ok}\n"
        "llm:\n  - tool_calls: [{id: c1, name: echo, arguments: {}}]\n",
    )
    own = write(
        tmp_path,
        "scenarios/g/own.yaml",
        base + "llm:\n  - text: first\n"
        "  - tool_calls: [{id: c1, name: read, builtin: true, arguments: {file_path: a}}]\n",
    )
    assert not load_scenario(plain, tmp_path).calls_builtin_tools
    assert not load_scenario(fixture, tmp_path).calls_builtin_tools
    assert load_scenario(own, tmp_path).calls_builtin_tools
