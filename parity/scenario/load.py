"""Scenario files: YAML text -> every finding, and a valid file -> a typed `Scenario`.

Checking a file's text takes three passes in modules of their own:
`parity.scenario.yaml_positions` (parsing, and key paths to line:column),
`parity.scenario.schema_findings` (the JSON Schema, in an author's words) and
`parity.scenario.checks` (what the schema cannot express); their findings are the
`ScenarioError`s of `parity.scenario.errors`. A file without errors becomes the
dataclasses of `parity.scenario.model`.
"""

from __future__ import annotations

import copy
from collections.abc import Collection
from pathlib import Path
from typing import Any

from yaml.nodes import Node

from parity.scenario.checks import cross_findings
from parity.scenario.errors import KeyPath, ScenarioError, ScenarioInvalid
from parity.scenario.model import (
    DEFAULT_CATALOG,
    DEFAULT_TARGETS,
    STEP_AFTER,
    ExpectedProblem,
    LlmEntry,
    Rule,
    Scenario,
    Step,
    Tool,
    Where,
)
from parity.scenario.schema_findings import schema_findings
from parity.scenario.yaml_positions import locate, parse


def discover(scenarios_dir: Path) -> list[Path]:
    """All scenario files below `scenarios_dir` (the project's configured scenarios
    directory, `parity.config.project.Config.scenarios_dir`), sorted."""
    if not scenarios_dir.is_dir():
        return []
    return sorted(p for p in scenarios_dir.rglob("*.yaml") if p.is_file())


def scenario_name(path: Path, root: Path | None = None) -> str:
    """The scenario's name: its path below `scenarios/` without the suffix.

    `root` may be the project root (holding `scenarios/`) or the scenarios directory
    itself; without it, the nearest ancestor directory named `scenarios` is used, and
    failing that the bare file stem.
    """
    resolved = path.resolve()
    bases = [root / "scenarios", root] if root is not None else []
    bases += [a for a in resolved.parents if a.name == "scenarios"][:1]
    for base in bases:
        try:
            relative = resolved.relative_to(base.resolve())
        except ValueError:
            continue
        return relative.with_suffix("").as_posix()
    return path.stem


def load_scenario(path: Path, root: Path | None = None) -> Scenario:
    """Read, validate and type one scenario file.

    Raises `ScenarioInvalid` listing every error in the file (with warnings), and
    `OSError` only if the file cannot be read. Warnings of a valid file are kept in
    `Scenario.warnings`.
    """
    text = path.read_text(encoding="utf-8")
    return build_scenario(text, path, root)


def build_scenario(text: str, path: Path, root: Path | None = None) -> Scenario:
    """`load_scenario` for text already in memory (`path` names it in messages)."""
    findings, data, node = check_text(text, str(path))
    if any(f.severity == "error" for f in findings):
        raise ScenarioInvalid(findings)
    assert node is not None  # a file without errors has a document
    return _build(data, node, path, scenario_name(path, root), findings)


def check_text(
    text: str, file: str, known_targets: Collection[str] | None = None
) -> tuple[list[ScenarioError], Any, Node | None]:
    """Every finding for one file's text, sorted by position, with its data and node tree.

    Pure: parses YAML, applies the JSON Schema, then the cross-checks the schema cannot
    express; with `known_targets`, every target named must be one of them. Never raises
    for bad input.
    """
    node, data, findings = parse(text, file)
    if node is None:
        return findings, data, node
    findings += schema_findings(data, node, file)
    findings += cross_findings(data, node, file, known_targets, DEFAULT_TARGETS)
    findings.sort(key=lambda f: (f.line, f.column, f.severity, f.key, f.message))
    return _dedupe(findings), data, node


def _dedupe(findings: list[ScenarioError]) -> list[ScenarioError]:
    out: list[ScenarioError] = []
    for finding in findings:
        if finding not in out:
            out.append(finding)
    return out


def _build(
    data: dict[str, Any], root: Node, path: Path, name: str, warnings: list[ScenarioError]
) -> Scenario:
    file = str(path)

    def where(key_path: KeyPath) -> Where:
        node = locate(root, key_path)
        return Where(file, node.start_mark.line + 1, node.start_mark.column + 1)

    def rules(section: str) -> list[Rule]:
        return [
            Rule(
                r["path"],
                r["reason"],
                list(r["targets"]) if "targets" in r else None,
                where((section, i)),
                dict(r["sides"]) if "sides" in r else None,
            )
            for i, r in enumerate(data.get(section, []))
        ]

    def step(raw: dict[str, Any], key_path: KeyPath) -> Step:
        ((kind, value),) = ((k, v) for k, v in raw.items() if k != STEP_AFTER)
        params: dict[str, Any]
        if kind == "parallel":
            params = {"steps": [step(s, (*key_path, kind, j)) for j, s in enumerate(value)]}
        elif kind == "send_raw":
            params = {"line": value}
        else:
            params = value if value is not None else {}
        return Step(kind, params, where(key_path), raw.get(STEP_AFTER))

    return Scenario(
        name=name,
        path=path,
        description=data["description"],
        targets=list(data.get("targets", DEFAULT_TARGETS)),
        captured=dict(data["captured"]) if "captured" in data else None,
        compare=data.get("compare", "exact"),
        diverge=rules("diverge"),
        masks=rules("masks"),
        expect_problems=[
            ExpectedProblem(
                e["kind"],
                e["reason"],
                list(e["targets"]) if "targets" in e else None,
                e.get("match"),
                where(("expect_problems", i)),
            )
            for i, e in enumerate(data.get("expect_problems", []))
        ],
        catalog=copy.deepcopy(data.get("catalog", DEFAULT_CATALOG)),
        tools=[_tool(t) for t in data.get("tools", [])],
        mcp_resources=copy.deepcopy(data["mcp_resources"]) if "mcp_resources" in data else None,
        builtin_tools=_families(data["builtin_tools"]) if "builtin_tools" in data else None,
        files=dict(data.get("files", {})),
        home_files=dict(data.get("home_files", {})),
        expect_files=list(data.get("expect_files", [])),
        llm=[LlmEntry(e, where(("llm", i))) for i, e in enumerate(data.get("llm", []))],
        client=dict(data.get("client", {})),
        steps=[step(s, ("steps", i)) for i, s in enumerate(data["steps"])],
        timeouts={k: float(v) for k, v in data.get("timeouts", {}).items()},
        warnings=[w for w in warnings if w.severity == "warning"],
    )


def _families(raw: str | list[str]) -> tuple[str, ...]:
    return (raw,) if isinstance(raw, str) else tuple(raw)


def _tool(raw: dict[str, Any]) -> Tool:
    content = raw.get("content")
    if content is None:
        content = [{"type": "text", "text": raw["result"]}] if "result" in raw else []
    return Tool(
        name=raw["name"],
        description=raw.get("description", ""),
        parameters=raw.get("parameters", {"type": "object", "properties": {}}),
        content=list(content),
        is_error=raw.get("is_error", False),
        delay_ms=raw.get("delay_ms", 0),
        hang=raw.get("hang", False),
        approval=raw.get("approval", "none"),
    )
