"""The increments are additive (docs/contract.md §6): the shipped baseline scenarios give
the same acp-plus transcripts with every increment on (`plus-full`, the shipped default)
and off (`plus`, the native profile), except the fields the increments declare.

The scenarios are the shipped files, recorded by the real `parity` for both targets;
the two snapshots of each are compared after removing exactly the declared fields, so
any other difference between the profiles fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from parity.view.dump import load_view
from tests.support.project import Project

REPO = Path(__file__).resolve().parents[2]

INITIALIZE_FIELDS = (
    ("agentCapabilities", "loadSession"),  # §6.1
    ("agentCapabilities", "sessionCapabilities", "additionalDirectories"),  # §6.2
    ("_meta",),  # §6.6: steering
)
COMMANDS = "available_commands_update"  # §6.4, after session/new (when it lands varies)


def _drop(node: dict[str, Any], path: tuple[str, ...]) -> None:
    for key in path[:-1]:
        node = node.get(key) or {}
    node.pop(path[-1], None)


def without_increments(view: dict[str, Any]) -> dict[str, Any]:
    """A plus-full view with the declared increment fields removed (pure; copies)."""
    view = yaml.safe_load(yaml.safe_dump(view))
    view.pop("agent", None)
    for step in view.get("steps", []):
        result = step.get("result")
        if step.get("do") == "initialize" and isinstance(result, dict):
            for path in INITIALIZE_FIELDS:
                _drop(result, path)
        if isinstance(result, dict):
            result.pop("modes", None)  # §6.3, and the same mode as a config option:
            options = result.get("configOptions")
            if isinstance(options, list):
                result["configOptions"] = [o for o in options if o.get("category") != "mode"]
        for key in ("updates", "late"):
            if isinstance(step.get(key), list):
                step[key] = [u for u in step[key] if COMMANDS not in yaml.safe_dump(u)]
                if not step[key]:
                    del step[key]
    return view


def test_baseline_transcripts_differ_only_by_the_declared_increment_fields(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path / "proj")
    project.write("parity.toml", 'scenarios = "scenarios"\nsnapshots = "snapshots"\n')
    shipped = sorted((REPO / "scenarios" / "baseline").glob("*.yaml"))
    assert len(shipped) >= 6
    for path in shipped:
        data = load_view(path.read_text(encoding="utf-8"))
        data["targets"] = ["plus", "plus-full"]
        data["diverge"] = []  # the native rules do not apply; no difference is expected
        data.pop("expect_problems", None)
        project.write(f"scenarios/baseline/{path.name}", yaml.safe_dump(data, sort_keys=False))
    done = project.parity("record", timeout=300)
    compared = 0
    for path in shipped:
        folder = project.root / "snapshots" / "baseline" / path.stem
        off = yaml.safe_load((folder / "plus.yaml").read_text(encoding="utf-8"))
        on = yaml.safe_load((folder / "plus-full.yaml").read_text(encoding="utf-8"))
        off.pop("agent", None)
        assert without_increments(on) == off, (path.stem, done.stdout[-2000:])
        assert without_increments(off) == off  # nothing to remove with the increments off
        compared += 1
    assert compared == len(shipped)
