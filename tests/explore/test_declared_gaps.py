"""A built-in tool a target lacks is a declared gap (`lacks_tools` in its table): `parity
explore --builtin-tools` calls none of them on a pair with that target and says so,
instead of finding the gap again in every example that calls one (docs/explore.md).
acp-plus's declarations are held to its own families table, so a tool ported to it
makes the test fail until its declaration goes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from acp_plus.core.tools.families import FAMILIES, ToolSetup, offered
from parity.config.project import load_config
from parity.explore.engine import Explorer, Options
from parity.scenario.families import TOOL_FAMILY, tools_named
from parity.targets.spec import TargetConfigError, parse_target

REPO = Path(__file__).resolve().parents[2]


def test_every_acp_plus_target_declares_exactly_the_tools_acp_plus_lacks() -> None:
    has = {tool.name for tool in offered(FAMILIES, ToolSetup()).tools}
    lacks = set(TOOL_FAMILY) - has
    assert lacks and "read" not in lacks
    targets = load_config(REPO).targets
    plus = [t for t in targets.values() if "acp_plus" in t.command]
    assert {"plus", "plus-full", "plus-openai", "plus-hooks"} <= {t.name for t in plus}
    for target in plus:
        assert set(tools_named(target.lacks_tools)) == lacks, target.name


def test_the_natives_declare_their_version_gaps() -> None:
    targets = load_config(REPO).targets
    assert set(targets["native"].lacks_tools) == {"ralph"}
    rc8 = set(tools_named(targets["native-rc8"].lacks_tools))
    assert {"read_image", "glob", "grep", "web_fetch", "exit_plan_mode"} <= rc8
    assert "ralph" not in rc8


def test_the_explorer_joins_both_targets_gaps_with_whose_they_are() -> None:
    config = load_config(REPO)
    options = Options(("native", "plus"), REPO, budget=1.0, max_examples=1)
    explorer = Explorer(config, options, runner=None, known=[])  # type: ignore[arg-type]
    # Only native lacks ralph (acp-plus offers it when named, as rc.8 does).
    assert explorer.lacking["ralph"].startswith("native: 0.2.1-rc.2 mounts no ralph")
    assert "plus:" not in explorer.lacking["ralph"]
    assert explorer.lacking["web"] == "plus: acp-plus has no web_search or web_fetch yet"


def test_a_name_that_is_no_tool_or_family_is_refused() -> None:
    table = {"family": "dsh", "dialect": "parity-stream", "fixture_tools": "stream"}
    with pytest.raises(TargetConfigError, match="`lacks_tools` names built-in tools"):
        parse_target("x", {**table, "command": ["x"], "lacks_tools": {"goals": "no"}}, "t")
    with pytest.raises(TargetConfigError, match="needs a reason"):
        parse_target("x", {**table, "command": ["x"], "lacks_tools": {"goal": " "}}, "t")
    spec = parse_target("x", {**table, "command": ["x"], "lacks_tools": {"goal": "no"}}, "t")
    assert spec.lacks_tools == {"goal": "no"}


def test_explore_says_which_gaps_it_leaves_out(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "parity"), "--root", str(REPO), "explore",
            "--targets", "plus,plus-full", "--builtin-tools", "--seed", "1",
            "--max-examples", "1", "--max-runs", "1", "--no-database",
            "-o", str(tmp_path / "found"),
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert "parity explore: never calls web (plus: acp-plus has no web_search" in done.stderr
    assert "declared gaps, never called: plus lacks plan-mode, web" in done.stdout
