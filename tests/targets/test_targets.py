"""Target declarations: parsing, merging, templating and availability reasons."""

from __future__ import annotations

import dataclasses
import json
import sys
import tomllib
from pathlib import Path

import pytest

from parity.config.project import load_config
from parity.scenario.families import FAMILIES
from parity.targets.launch import availability, describe, plan, run_setup
from parity.targets.spec import TargetConfigError, TargetSpec, parse_target

NATIVE_REASON = "PARITY_DSH=off: this target does not run here (its recordings stand in)"
RC8_REASON = (
    "PARITY_DSH_RC8 is unset: set it to a DSH ==0.1.0rc8 executable or source checkout "
    "(docs/native.md)"
)


def test_builtins_parse_and_name_every_required_target(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert {"plus", "plus-openai", "native", "codex-acp", "qwen-code", "opencode"} <= set(
        config.targets
    )
    assert config.source == "built-in"
    assert config.targets["native"].family == "dsh"
    assert config.targets["codex-acp"].dialect == "openai-responses"
    assert config.targets["codex-acp"].install == {"npm": "@zed-industries/codex-acp@0.16.0"}


def test_unavailable_reasons_are_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setenv("PARITY_DSH", "off")
    monkeypatch.delenv("PARITY_DSH_RC8", raising=False)
    config = load_config(tmp_path)
    rows = {name: (state, detail) for name, state, detail in describe(config.targets, config.root)}
    assert rows["native"] == ("unavailable", NATIVE_REASON)
    assert rows["native-rc8"] == ("unavailable", RC8_REASON)
    for peer in ("codex-acp", "qwen-code", "opencode"):
        assert rows[peer] == ("unavailable", "not installed: run parity peers install")
    assert rows["plus"][0] == "available"


def test_peer_becomes_available_once_its_binary_exists(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    spec = config.targets["qwen-code"]
    assert availability(spec, tmp_path) == "not installed: run parity peers install"
    binary = tmp_path / ".cache/peers/qwen-code/node_modules/.bin/qwen"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    assert availability(spec, tmp_path) is None


def test_plus_plan_renders_command_env_and_config(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    home, work = tmp_path / "home", tmp_path / "work"
    launch = plan(
        config.targets["plus"],
        repo=tmp_path,
        llm_base="http://127.0.0.1:9/runs/r1/",
        workdir=work,
        home=home,
    )
    assert launch.argv == (
        sys.executable,
        "-m",
        "acp_plus",
        "--config",
        f"{home}/acp-plus.toml",
        "--home",
        f"{home}/acp-plus",
    )
    assert launch.env == {}
    cfg = tomllib.loads(launch.files["acp-plus.toml"])
    assert cfg == {
        "provider": "mock",
        "model": "mock",
        "session_list_page_size": 2,
        "builtin_tools": list(FAMILIES),
        "profile": "native",
        "providers": {"parity": {"api": "parity-stream", "base_url": "http://127.0.0.1:9/runs/r1"}},
    }


def test_builtin_families_placeholder_follows_the_scenario(tmp_path: Path) -> None:
    """acp-plus gets exactly the scenario's built-in tool families, as a TOML array, so
    its model sees what native's sees in the same run (docs/native.md); none when the
    scenario has none. `{builtin_tools}` says whether there is any."""
    config = load_config(tmp_path)
    spec = config.targets["plus-full"]
    spec = dataclasses.replace(
        spec, files={**spec.files, "any.txt": "{builtin_tools} {builtin_families}"}
    )
    for families in ((), ("bash", "fs"), FAMILIES):
        launch = plan(
            spec,
            repo=tmp_path,
            llm_base="http://127.0.0.1:9/runs/r1",
            workdir=tmp_path / "w",
            home=tmp_path / "h",
            families=families,
        )
        cfg = tomllib.loads(launch.files["acp-plus.toml"])
        assert cfg["builtin_tools"] == list(families)
        assert cfg["profile"] == "plus"
        flag = "true" if families else "false"
        assert launch.files["any.txt"] == f"{flag} {json.dumps(list(families))}"


def test_json_templates_keep_their_braces(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    launch = plan(
        config.targets["opencode"],
        repo=tmp_path,
        llm_base="http://127.0.0.1:9/runs/r2",
        workdir=tmp_path / "w",
        home=tmp_path / "h",
    )
    data = json.loads(launch.files["opencode.json"])
    assert data["provider"]["fake"]["options"]["baseURL"] == "http://127.0.0.1:9/runs/r2/v1"
    assert launch.env["OPENCODE_CONFIG"] == f"{tmp_path / 'h'}/opencode.json"


def test_project_file_overrides_and_adds(tmp_path: Path) -> None:
    (tmp_path / "parity.toml").write_text(
        'snapshots = "snaps"\n'
        "[targets.plus.env]\nEXTRA = '{workdir}'\n"
        "[targets.echo]\nfamily = 'peer'\ndialect = 'openai-chat'\n"
        "fixture_tools = 'mcp'\ncommand = ['{python}', 'agent.py']\n"
    )
    config = load_config(tmp_path)
    assert config.snapshots_dir == tmp_path / "snaps"
    assert config.targets["plus"].env == {"EXTRA": "{workdir}"}
    assert config.targets["plus"].dialect == "parity-stream"  # merged, not replaced
    assert config.targets["echo"].source.endswith("parity.toml")
    assert availability(config.targets["echo"], tmp_path) is None


def test_pyproject_tool_table_is_read(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.parity.targets.native]\nrequires = []\ncommand = ['/nope/dsh']\n"
    )
    config = load_config(tmp_path)
    assert "[tool.parity]" in config.source
    assert availability(config.targets["native"], tmp_path) == "/nope/dsh not found"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"family": "x", "dialect": "openai-chat", "fixture_tools": "mcp", "command": ["a"]},
            "`family` must be one of dsh, peer, got 'x'",
        ),
        (
            {"family": "dsh", "dialect": "openai-chat", "fixture_tools": "mcp"},
            "`command` is required",
        ),
        (
            {
                "family": "dsh",
                "dialect": "openai-chat",
                "fixture_tools": "mcp",
                "command": ["a"],
                "comand": 1,
            },
            "unknown key(s) ['comand']",
        ),
        (
            {
                "family": "dsh",
                "dialect": "openai-chat",
                "fixture_tools": "mcp",
                "command": ["a"],
                "requires": [{"reason": "x"}],
            },
            "needs `command` or `file`",
        ),
        (
            {
                "family": "dsh",
                "dialect": "openai-chat",
                "fixture_tools": "mcp",
                "command": ["a"],
                "ignores": {"$/cancel_request": " "},
            },
            "`ignores` names ACP methods, each with why the agent ignores it",
        ),
        (
            {
                "family": "dsh",
                "dialect": "openai-chat",
                "fixture_tools": "mcp",
                "command": ["a"],
                "ignores": ["$/cancel_request"],
            },
            "`ignores` must be a table of strings",
        ),
    ],
)
def test_bad_declarations_name_file_and_target(table: dict[str, object], message: str) -> None:
    with pytest.raises(TargetConfigError) as info:
        parse_target("bad", table, "parity.toml")
    assert str(info.value).startswith("parity.toml: target 'bad': ")
    assert message in str(info.value)


def test_setup_failure_is_reported_with_its_output(tmp_path: Path) -> None:
    spec = TargetSpec(
        name="s",
        family="peer",
        dialect="openai-chat",
        fixture_tools="mcp",
        command=("x",),
        setup=("{python}", "-c", "import sys; sys.exit('no toolchain')"),
    )
    reason = run_setup(spec, tmp_path)
    assert reason is not None and "exited 1" in reason and "no toolchain" in reason
    ok = TargetSpec(
        name="s",
        family="peer",
        dialect="openai-chat",
        fixture_tools="mcp",
        command=("x",),
        setup=("{python}", "-c", "pass"),
    )
    assert run_setup(ok, tmp_path) is None


BASE = {"dialect": "parity-stream", "fixture_tools": "stream", "command": ["a"]}


def test_conformance_and_eof_stage_default_by_family_and_can_be_set() -> None:
    dsh = parse_target("d", {**BASE, "family": "dsh"}, "parity.toml")
    peer = parse_target("p", {**BASE, "family": "peer"}, "parity.toml")
    assert (dsh.conformance, dsh.shutdown_eof) == ("fail", 2.0)
    assert (peer.conformance, peer.shutdown_eof) == ("warn", 0.5)
    set_ = parse_target(
        "p", {**BASE, "family": "peer", "conformance": "fail", "shutdown_eof": 0}, "parity.toml"
    )
    assert (set_.conformance, set_.shutdown_eof) == ("fail", 0.0)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"conformance": "strict"}, "`conformance` must be one of fail, warn, got 'strict'"),
        ({"shutdown_eof": "1s"}, "`shutdown_eof` must be seconds between 0 and 60, got '1s'"),
        ({"shutdown_eof": True}, "`shutdown_eof` must be seconds"),
        ({"shutdown_eof": -1}, "`shutdown_eof` must be seconds"),
    ],
)
def test_bad_conformance_or_eof_stage_is_named(extra: dict[str, object], message: str) -> None:
    with pytest.raises(TargetConfigError) as info:
        parse_target("bad", {**BASE, "family": "dsh", **extra}, "parity.toml")
    assert message in str(info.value)


def test_rc8_declares_the_method_it_ignores_and_explore_never_sends_it(
    tmp_path: Path,
) -> None:
    from parity.explore.engine import Explorer, Options

    config = load_config(tmp_path)
    assert "$/cancel_request" in config.targets["native-rc8"].ignores
    # 0.2.1-rc.2 cancels a request (scenarios/protocol/cancel-request, recorded live).
    assert config.targets["native"].ignores == config.targets["plus"].ignores == {}
    options = Options(("native-rc8", "plus"), tmp_path, budget=1.0, max_examples=1)
    explorer = Explorer(config, options, runner=None, known=[])  # type: ignore[arg-type]
    assert list(explorer.ignored) == ["$/cancel_request"]
    assert explorer.ignored["$/cancel_request"].startswith("native-rc8: 0.1.0-rc.8")


def test_targets_option_selects_adds_and_names_the_unknown(tmp_path: Path) -> None:
    from parity.targets.spec import target_selection

    specs = load_config(tmp_path).targets
    assert target_selection(None, specs, "parity.toml") == (None, set())
    assert target_selection(" plus, native ,", specs, "parity.toml") == ({"plus", "native"}, set())
    # `+NAME` alone keeps every scenario's own targets; with plain names it joins them.
    assert target_selection("+plus-full", specs, "parity.toml") == (None, {"plus-full"})
    assert target_selection("plus,+plus-full", specs, "x") == ({"plus", "plus-full"}, {"plus-full"})
    with pytest.raises(TargetConfigError) as info:
        target_selection("plus,+nobody,gohst", specs, "parity.toml")
    assert str(info.value).startswith("--targets: unknown target(s) gohst, nobody (known: ")
    assert str(info.value).endswith("declare a target in parity.toml)")
