"""The DSH launch kit (parity/targets/dsh.py) and the `launcher` handling in
parity/targets/spec.py and parity/targets/launch.py.

Pure functions are checked over plain data; `locate` and `launch` over a fake DSH checkout
and fake `node`/`dsh` executables (tiny shell scripts) under tmp_path.
"""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from parity.config.project import load_config
from parity.scenario.families import FAMILIES
from parity.targets import dsh, dsh_rows
from parity.targets.dsh import Install
from parity.targets.dsh_rows import DshNotFound, JsExpr, row_patches
from parity.targets.launch import availability, plan
from parity.targets.spec import TargetConfigError, parse_target

ENGINES = "^22.19.0 || >=24.0.0"
REPO = Path(__file__).resolve().parents[2]

BASE_COMPOSITION = """\
- id: llm-deepseek
  name: '@deepseek-ai/dsh-llm-deepseek-api-key'
  config:
    apiKey: !!js "process.env.DEEPSEEK_API_KEY"
- id: llm-openai
  name: '@deepseek-ai/dsh-llm-openai-compatible'
- id: compaction
  name: '@deepseek-ai/dsh-compaction-summary'
- id: tools
  name: '@deepseek-ai/dsh-tools-fs'
  config:
    root: !!js "process.cwd()"
- id: lookalike
  name: '@someone-else/dsh-llm-thing'
- id: app
  name: '@deepseek-ai/dsh-acp-demo'
  config:
    provider: deepseek
    model: deepseek-chat
    persona: coder
    workspaceContext:
      agentsMd: true
      maxBytes: 4096
    mode: !!js "process.env.X ?? 'a'"
    persistenceRoot: ~/.dsh/sessions
    persistenceCompression: gzip
"""

CATALOG: dict[str, Any] = {
    "protocol": "parity-stream/1",
    "providers": [
        {"id": "empty", "models": []},
        {"id": "mock", "models": [{"id": "mock-1"}, {"id": "mock-2"}]},
        {"id": "later", "models": [{"id": "later-1"}]},
    ],
}


@pytest.fixture(autouse=True)
def _fresh_version_cache() -> Iterator[None]:
    dsh._cached_version.cache_clear()
    yield
    dsh._cached_version.cache_clear()


PROFILE = """\
# == @deepseek-ai/dsh-base
- id: llm-deepseek
  name: '@deepseek-ai/dsh-llm-deepseek-api-key'
- id: tool-bash
  name: '@deepseek-ai/dsh-tool-bash'
  disabled: !!js process.platform === 'win32'
- id: session-persistence-jsonl
  name: '@deepseek-ai/dsh-session-persistence-jsonl'
  config:
    root: !!js dshHomePath('sessions')
- id: acp
  name: '@deepseek-ai/dsh-acp'
  config:
    provider: deepseek-official
    model: deepseek-v4-flash
"""
"""What a fake installed dsh prints for `--profile acp --dump-config` (0.2.x's shape)."""


def _script(path: Path, output: str) -> Path:
    """An executable shell script printing `output` (its `acp` profile, `PROFILE`, when
    asked for `--dump-config`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"#!/bin/sh\ncase \"$*\" in *--dump-config*) cat <<'EOF'\n{PROFILE}EOF\n"
        f"exit 0;; esac\necho '{output}'\n",
        encoding="utf-8",
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _checkout(
    root: Path,
    *,
    name: str = dsh.ROOT_PACKAGE,
    bin_file: bool = True,
    composition: bool = True,
    tsx: bool = True,
) -> Path:
    """A fake DSH source checkout with the files `locate` and `launch` look at."""
    root.mkdir(parents=True, exist_ok=True)
    package = {"name": name, "version": "0.3.1", "engines": {"node": ENGINES}}
    (root / "package.json").write_text(json.dumps(package), encoding="utf-8")
    if bin_file:
        (root / dsh.CHECKOUT_BIN).parent.mkdir(parents=True)
        (root / dsh.CHECKOUT_BIN).write_text("// bin\n", encoding="utf-8")
    if composition:
        (root / dsh.CHECKOUT_COMPOSITION).parent.mkdir(parents=True)
        (root / dsh.CHECKOUT_COMPOSITION).write_text(BASE_COMPOSITION, encoding="utf-8")
    if tsx:
        tsx_dir = root / "node_modules" / "tsx"
        (tsx_dir / "dist").mkdir(parents=True)
        (tsx_dir / "dist" / "loader.mjs").write_text("// loader\n", encoding="utf-8")
        tsx_package = {"name": "tsx", "exports": {".": "./dist/loader.mjs"}}
        (tsx_dir / "package.json").write_text(json.dumps(tsx_package), encoding="utf-8")
    return root


def _empty_path(tmp_path: Path) -> str:
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    return str(empty)


# -- satisfies ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "ok"),
    [
        ("v20.20.2", False),
        ("v22.19.0", True),
        ("v22.20.0", True),
        ("v22.18.9", False),
        ("v23.1.0", False),
        ("v24.0.0", True),
        ("v25.1.0", True),
        ("22.19.0", True),
        ("not a version", False),
    ],
)
def test_satisfies_dsh_engines(version: str, ok: bool) -> None:
    assert dsh.satisfies(version, ENGINES) is ok


def test_satisfies_exact_alternative() -> None:
    assert dsh.satisfies("v22.1.0", "22.1.0")
    assert not dsh.satisfies("v22.1.1", "22.1.0")


# -- composition YAML --------------------------------------------------------------------


def test_js_scalars_round_trip_as_js() -> None:
    rows = dsh.load_composition(
        "- id: a\n  name: x\n  config:\n    mode: !!js \"process.env.X ?? 'a'\"\n    plain: b\n"
    )
    mode = rows[0]["config"]["mode"]
    assert isinstance(mode, JsExpr)
    assert mode == "process.env.X ?? 'a'"
    assert type(rows[0]["config"]["plain"]) is str

    text = dsh.dump_composition(rows)
    assert "!!js" in text
    again = dsh.load_composition(text)
    assert again == rows
    assert isinstance(again[0]["config"]["mode"], JsExpr)
    assert type(again[0]["config"]["plain"]) is str


def test_long_js_scalar_round_trips_verbatim() -> None:
    expr = JsExpr(" ?? ".join(f"process.env.PARITY_VARIABLE_{i}" for i in range(12)) + " ?? 'x'")
    text = dsh.dump_composition([{"id": "a", "config": {"v": expr}}])
    value = dsh.load_composition(text)[0]["config"]["v"]
    assert isinstance(value, JsExpr)
    assert value == expr


_real_packaged = dsh._packaged


@pytest.fixture(autouse=True)
def _no_packaged_dsh(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness's own venv may carry the DSH wheel; these tests look only where each
    one says (tests of the wheel lookup install their own fake package)."""
    monkeypatch.setattr(dsh, "_packaged", lambda env: None)


def test_load_composition_rejects_non_list() -> None:
    with pytest.raises(DshNotFound):
        dsh.load_composition("id: a\nname: b\n")


# -- checkout_composition ----------------------------------------------------------------


def _checkout_rows(tmp_path: Path) -> list[dict[str, Any]]:
    return dsh.checkout_composition(
        dsh.load_composition(BASE_COMPOSITION),
        tmp_path / "cordis.yml",
        provider="mock",
        model="mock-1",
        sessions=tmp_path / "sessions",
        plugin=tmp_path / "plugin.mjs",
    )


def _patches(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    assert len(rows) == 1
    patches = rows[0]["config"]["patches"]
    assert isinstance(patches, list)
    return patches


def test_checkout_composition_includes_base(tmp_path: Path) -> None:
    rows = _checkout_rows(tmp_path)
    assert len(rows) == 1
    assert rows[0]["name"] == "@deepseek-ai/cordis-plugin-include"
    assert rows[0]["config"]["path"] == str(tmp_path / "cordis.yml")


def test_checkout_composition_disables_model_and_compaction_rows(tmp_path: Path) -> None:
    patches = _patches(_checkout_rows(tmp_path))
    disabled = [p for p in patches if p.get("disabled")]
    assert disabled == [
        {
            "id": "llm-deepseek",
            "name": "@deepseek-ai/dsh-llm-deepseek-api-key",
            "disabled": True,
        },
        {
            "id": "llm-openai",
            "name": "@deepseek-ai/dsh-llm-openai-compatible",
            "disabled": True,
        },
        {"id": "compaction", "name": "@deepseek-ai/dsh-compaction-summary", "disabled": True},
    ]
    touched = {p.get("id") for p in patches}
    assert "tools" not in touched
    assert "lookalike" not in touched


def test_without_builtin_tools_every_tool_row_is_off(tmp_path: Path) -> None:
    """A scenario without built-in tool families: native's model sees only the fixture
    tools (docs/native.md, "The model's view"), so its tool rows and the app's own tool
    switches are off; with every family the composition keeps them as shipped."""
    off = _checkout_patches(tmp_path, ())
    assert sorted(p["id"] for p in off if p.get("disabled")) == [
        "bash",
        "hooks",
        "subagent",
        "tool-fs",
        "tool-subagent",
        "workflow",
    ]
    (app,) = [p for p in off if p.get("id") == "app"]
    assert app["config"]["toolJobs"] is False and app["config"]["goals"] is False
    assert app["config"]["skills"] == {"enabled": False}
    assert app["config"]["persona"] == "p"
    on = _checkout_patches(tmp_path, FAMILIES)
    assert [p for p in on if p.get("disabled")] == []
    assert set(next(p for p in on if p.get("id") == "app")["config"]) == {
        "persona",
        "provider",
        "model",
        "persistenceRoot",
        "persistenceCompression",
    }


CHECKOUT_ROWS = [
    {"id": "bash", "name": "@deepseek-ai/dsh-bash-sandbox"},
    {"id": "tool-fs", "name": "@deepseek-ai/dsh-tool-fs"},
    {"id": "tool-subagent", "name": "@deepseek-ai/dsh-tool-subagent"},
    {"id": "subagent", "name": "@deepseek-ai/dsh-subagent"},
    {"id": "workflow", "name": "@deepseek-ai/dsh-workflow-worker-thread"},
    {"id": "hooks", "name": "@deepseek-ai/dsh-hooks-codex"},
    {"id": "sandbox", "name": "@deepseek-ai/dsh-sandbox-local"},
    {"id": "app", "name": "@deepseek-ai/dsh-acp-demo", "config": {"persona": "p"}},
]
"""0.1.0-rc.8's kinds of rows: tool rows, the subagent service, hooks, infrastructure."""


def _checkout_patches(tmp_path: Path, families: Sequence[str]) -> list[dict[str, Any]]:
    return _patches(
        dsh.checkout_composition(
            CHECKOUT_ROWS,
            tmp_path / "c.yml",
            provider="p",
            model="m",
            sessions=tmp_path / "s",
            families=families,
        )
    )


def test_a_checkout_mounts_the_rows_and_app_switches_of_its_families(tmp_path: Path) -> None:
    """rc.8's jobs, goals and skills are switches of the app row; `workflow` needs the
    subagent service row, which makes no tool itself."""
    patches = _checkout_patches(tmp_path, ("jobs", "workflow"))
    assert sorted(p["id"] for p in patches if p.get("disabled")) == [
        "bash",
        "hooks",
        "tool-fs",
        "tool-subagent",
    ]
    (app,) = [p for p in patches if p.get("id") == "app"]
    assert "toolJobs" not in app["config"]
    assert app["config"]["goals"] is False and app["config"]["skills"] == {"enabled": False}


PROFILE_021 = [
    ("tool-working-directory", "@deepseek-ai/dsh-tool-working-directory"),
    ("bash-sandbox", "@deepseek-ai/dsh-bash-sandbox"),
    ("tool-bash", "@deepseek-ai/dsh-tool-bash"),
    ("tool-pwsh", "@deepseek-ai/dsh-tool-pwsh"),
    ("tool-jobs", "@deepseek-ai/dsh-tool-jobs"),
    ("fs-observation-policy", "@deepseek-ai/dsh-fs-observation-policy"),
    ("tool-fs", "@deepseek-ai/dsh-tool-fs"),
    ("tool-fs-search", "@deepseek-ai/dsh-tool-fs-search"),
    ("tool-skill", "@deepseek-ai/dsh-tool-skill"),
    ("plan-mode", "@deepseek-ai/dsh-plan-mode"),
    ("subagent", "@deepseek-ai/dsh-subagent"),
    ("subagent-spawn-in-process", "@deepseek-ai/dsh-subagent-spawn-in-process"),
    ("subagent-fork-in-process", "@deepseek-ai/dsh-subagent-fork-in-process"),
    ("tool-subagent-control", "@deepseek-ai/dsh-tool-subagent-control"),
    ("tool-subagent-list-agents", "@deepseek-ai/dsh-tool-subagent-control/list-agents"),
    ("tool-subagent", "@deepseek-ai/dsh-tool-subagent"),
    ("tool-subagent-fork", "@deepseek-ai/dsh-tool-subagent"),
    ("ptc-runtime", "@deepseek-ai/dsh-ptc-runtime-node"),
    ("workflow-ptc", "@deepseek-ai/dsh-workflow-ptc"),
    ("tool-workflow", "@deepseek-ai/dsh-tool-workflow"),
    ("timeout-policy", "@deepseek-ai/dsh-tool-call-timeout-policy"),
    ("tool-todo", "@deepseek-ai/dsh-tool-todo"),
    ("tool-goal", "@deepseek-ai/dsh-tool-goal"),
    ("tool-web", "@deepseek-ai/dsh-tool-web"),
    ("acp", "@deepseek-ai/dsh-acp"),
]
"""The rows of 0.2.1-rc.2's `acp` profile that make or serve built-in tools (its
`--dump-config`, ids and plugin names as printed), plus its bridge."""

SUBAGENT_021 = [
    "subagent",
    "subagent-spawn-in-process",
    "subagent-fork-in-process",
    "tool-subagent-control",
    "tool-subagent-list-agents",
    "tool-subagent",
    "tool-subagent-fork",
]


@pytest.mark.parametrize(
    ("family", "mounted"),
    [
        ("bash", ["bash-sandbox", "tool-bash", "tool-pwsh"]),
        ("fs", ["tool-fs"]),
        ("fs-search", ["tool-fs-search"]),
        ("jobs", ["tool-jobs"]),
        ("todo", ["tool-todo"]),
        ("working-directory", ["tool-working-directory"]),
        ("plan-mode", ["plan-mode"]),
        ("skill", ["tool-skill"]),
        ("web", ["tool-web"]),
        ("goal", ["tool-goal"]),
        ("workflow", ["subagent", "subagent-spawn-in-process", "workflow-ptc", "tool-workflow"]),
        ("subagent", SUBAGENT_021),
        ("hooks", ["bash-sandbox"]),
    ],
)
def test_native_021_mounts_exactly_the_rows_of_the_named_family(
    family: str, mounted: list[str], tmp_path: Path
) -> None:
    """Which rows make which tools was observed by running 0.2.1-rc.2 with one group of
    rows on at a time (docs/native.md, "The model's view"); every other tool row is off,
    the infrastructure rows (the sandbox policy, the timeout wrapper, PTC) stay as shipped."""
    rows = [{"id": i, "name": n} for i, n in PROFILE_021]
    patch = row_patches(rows, provider="m", model="m", sessions=tmp_path, families=[family])
    off = {p["id"] for p in patch if p.get("disabled")}
    tool_rows = {i for i, _ in PROFILE_021} - {
        "fs-observation-policy",
        "ptc-runtime",
        "timeout-policy",
        "acp",
    }
    assert tool_rows - off == set(mounted)
    assert {"fs-observation-policy", "ptc-runtime", "timeout-policy"}.isdisjoint(off)


def test_rc8_ralph_and_hooks_mount_what_they_need(tmp_path: Path) -> None:
    """Seen on 0.1.0-rc.8: `ralph` waits for the workflow engine, the hook rows for the
    shell of bash's executor row; without them the process does not start."""
    rows = [
        {"id": "bash", "name": "@deepseek-ai/dsh-bash-sandbox"},
        {"id": "subagent", "name": "@deepseek-ai/dsh-subagent"},
        {"id": "spawn", "name": "@deepseek-ai/dsh-subagent-spawn-in-process"},
        {"id": "engine", "name": "@deepseek-ai/dsh-workflow-worker-thread"},
        {"id": "ralph", "name": "@deepseek-ai/dsh-tool-ralph"},
        {"id": "hooks", "name": "@deepseek-ai/dsh-hooks-codex"},
        {"id": "app", "name": "@deepseek-ai/dsh-acp-demo", "config": {}},
    ]

    def on(families: Sequence[str]) -> set[str]:
        patch = row_patches(rows, provider="m", model="m", sessions=tmp_path, families=families)
        return {r["id"] for r in rows} - {p["id"] for p in patch if p.get("disabled")} - {"app"}

    assert on(["ralph"]) == {"subagent", "spawn", "engine", "ralph"}
    assert on(["hooks"]) == {"bash", "hooks"}


def test_a_tool_row_no_family_claims_is_on_only_with_every_family(tmp_path: Path) -> None:
    """A newer DSH's new tool row: off unless the scenario asks for every family."""
    rows = [
        {"id": "new", "name": "@deepseek-ai/dsh-tool-something-new"},
        {"id": "acp", "name": "@deepseek-ai/dsh-acp"},
    ]

    def off(families: Sequence[str]) -> bool:
        patch = row_patches(rows, provider="m", model="m", sessions=tmp_path, families=families)
        return any(p.get("id") == "new" and p.get("disabled") for p in patch)

    assert off(("bash", "fs")) and off(())
    assert not off(FAMILIES)


def test_checkout_composition_keeps_already_disabled_rows_off(tmp_path: Path) -> None:
    base = [
        {"id": "llm", "name": "@deepseek-ai/dsh-llm-x", "disabled": True},
        {"id": "app", "name": "@deepseek-ai/dsh-acp-demo", "config": {}},
    ]
    rows = dsh.checkout_composition(
        base, tmp_path / "c.yml", provider="p", model="m", sessions=tmp_path / "s"
    )
    for patch in _patches(rows):
        if patch.get("id") == "llm":
            assert patch.get("disabled") is True


def test_checkout_composition_restates_acp_demo_config(tmp_path: Path) -> None:
    patches = _patches(_checkout_rows(tmp_path))
    app = [p for p in patches if p.get("id") == "app"]
    assert len(app) == 1
    assert app[0]["name"] == "@deepseek-ai/dsh-acp-demo"
    config = app[0]["config"]
    assert config == {
        "provider": "mock",
        "model": "mock-1",
        "persona": "coder",
        "workspaceContext": {"agentsMd": True, "maxBytes": 4096},
        "mode": "process.env.X ?? 'a'",
        "persistenceRoot": str(tmp_path / "sessions"),
        "persistenceCompression": "none",
    }
    assert isinstance(config["mode"], JsExpr)


def test_checkout_composition_does_not_mutate_base_rows(tmp_path: Path) -> None:
    base = dsh.load_composition(BASE_COMPOSITION)
    before = dsh.dump_composition(base)
    dsh.checkout_composition(
        base, tmp_path / "c.yml", provider="mock", model="m", sessions=tmp_path / "s"
    )
    assert dsh.dump_composition(base) == before


def test_checkout_composition_bare_acp_row_gets_route_only(tmp_path: Path) -> None:
    base = [
        {
            "id": "acp",
            "name": "@deepseek-ai/dsh-acp",
            "config": {"provider": "deepseek", "model": "x", "persona": JsExpr("p()")},
        }
    ]
    patches = _patches(
        dsh.checkout_composition(
            base, tmp_path / "c.yml", provider="mock", model="m", sessions=tmp_path / "s"
        )
    )
    acp = next(p for p in patches if p.get("id") == "acp")
    assert acp["config"] == {
        "provider": "mock",
        "model": "m",
        "persona": "p()",
        "sessionListPageSize": 2,
    }
    assert "persistenceRoot" not in acp["config"]


def test_checkout_composition_inserts_plugin_by_absolute_path(tmp_path: Path) -> None:
    patches = _patches(_checkout_rows(tmp_path))
    inserts = [p for p in patches if "insert" in p]
    assert inserts == [{"insert": [{"id": "parity-stream", "name": str(tmp_path / "plugin.mjs")}]}]


def test_checkout_composition_default_plugin_is_shipped_absolute(tmp_path: Path) -> None:
    rows = dsh.checkout_composition(
        dsh.load_composition(BASE_COMPOSITION),
        tmp_path / "c.yml",
        provider="p",
        model="m",
        sessions=tmp_path / "s",
    )
    (insert,) = [p for p in _patches(rows) if "insert" in p]
    name = insert["insert"][0]["name"]
    assert Path(name).is_absolute()
    assert Path(name).is_file()
    assert Path(name) == dsh.PLUGIN


def test_checkout_composition_needs_an_acp_row(tmp_path: Path) -> None:
    base = [{"id": "llm", "name": "@deepseek-ai/dsh-llm-x"}]
    with pytest.raises(DshNotFound, match="no ACP row"):
        dsh.checkout_composition(
            base, tmp_path / "c.yml", provider="p", model="m", sessions=tmp_path / "s"
        )


def test_checkout_composition_dumps_and_loads_back(tmp_path: Path) -> None:
    rows = _checkout_rows(tmp_path)
    again = dsh.load_composition(dsh.dump_composition(rows))
    assert again == rows
    app = next(p for p in again[0]["config"]["patches"] if p.get("id") == "app")
    assert isinstance(app["config"]["mode"], JsExpr)


# -- route / row_patches (installed) -------------------------------------------------------------


def test_route_first_provider_with_a_model() -> None:
    assert dsh.route(CATALOG) == ("mock", "mock-1")


def test_route_default_catalog() -> None:
    from parity.scenario.model import DEFAULT_CATALOG

    assert dsh.route(DEFAULT_CATALOG) == ("mock", "mock")


@pytest.mark.parametrize(
    "catalog",
    [{}, {"providers": []}, {"providers": [{"id": "a", "models": []}, {"id": "b"}]}],
)
def test_route_without_models(catalog: dict[str, Any]) -> None:
    with pytest.raises(DshNotFound, match="no provider with a model"):
        dsh.route(catalog)


def test_installed_patch_shape(tmp_path: Path) -> None:
    patch = row_patches(
        dsh.load_composition(PROFILE),
        provider="mock",
        model="mock-1",
        sessions=tmp_path / "s",
        plugin=tmp_path / "p.mjs",
        families=(),
    )
    assert patch == [
        {"id": "llm-deepseek", "name": "@deepseek-ai/dsh-llm-deepseek-api-key", "disabled": True},
        # A `!!js` disabled expression may be false at run time: the row is switched off.
        {"id": "tool-bash", "name": "@deepseek-ai/dsh-tool-bash", "disabled": True},
        {
            "id": "acp",
            "name": "@deepseek-ai/dsh-acp",
            "config": {"provider": "mock", "model": "mock-1", "sessionListPageSize": 2},
        },
        {
            "id": "session-persistence-jsonl",
            "name": "@deepseek-ai/dsh-session-persistence-jsonl",
            "config": {"root": str(tmp_path / "s"), "compression": "none"},
        },
        {"insert": [{"id": "parity-stream", "name": str(tmp_path / "p.mjs")}]},
    ]
    assert dsh.load_composition(dsh.dump_composition(patch)) == patch


def test_installed_patch_keeps_tool_rows_when_the_scenario_calls_them(tmp_path: Path) -> None:
    patch = row_patches(
        dsh.load_composition(PROFILE),
        provider="m",
        model="m",
        sessions=tmp_path,
        families=("bash",),
    )
    assert not [p for p in patch if p.get("id") == "tool-bash"]


# -- locate ------------------------------------------------------------------------------


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"PATH": _empty_path(tmp_path), **extra}


def test_locate_checkout_without_package_json(tmp_path: Path) -> None:
    root = tmp_path / "dsh"
    root.mkdir()
    with pytest.raises(DshNotFound, match=r"cannot read package\.json"):
        dsh.locate(_env(tmp_path, PARITY_DSH=str(root)))


def test_locate_checkout_with_wrong_root_package(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "dsh", name="some-other-project")
    with pytest.raises(DshNotFound, match="is not a DSH checkout"):
        dsh.locate(_env(tmp_path, PARITY_DSH=str(root)))


@pytest.mark.parametrize(
    ("missing", "needle"),
    [("bin_file", str(dsh.CHECKOUT_BIN)), ("composition", str(dsh.CHECKOUT_COMPOSITION))],
)
def test_locate_checkout_missing_layout_file(tmp_path: Path, missing: str, needle: str) -> None:
    root = _checkout(tmp_path / "dsh", **{missing: False})  # type: ignore[arg-type]
    node = _script(tmp_path / "node-bin" / "node", "v22.20.0")
    with pytest.raises(DshNotFound) as info:
        dsh.locate(_env(tmp_path, PARITY_DSH=str(root), PARITY_NODE=str(node)))
    assert needle in str(info.value)


def test_locate_checkout_without_dependencies(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "dsh", tsx=False)
    node = _script(tmp_path / "node-bin" / "node", "v22.20.0")
    with pytest.raises(DshNotFound, match="pnpm install"):
        dsh.locate(_env(tmp_path, PARITY_DSH=str(root), PARITY_NODE=str(node)))


def test_locate_checkout_with_old_node(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "dsh")
    node = _script(tmp_path / "node-bin" / "node", "v20.1.0")
    with pytest.raises(DshNotFound) as info:
        dsh.locate(_env(tmp_path, PARITY_DSH=str(root), PARITY_NODE=str(node)))
    message = str(info.value)
    assert "v20.1.0" in message
    assert "PARITY_NODE" in message
    assert ENGINES in message


def test_locate_checkout_without_any_node(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "dsh")
    with pytest.raises(DshNotFound, match="node not found"):
        dsh.locate(_env(tmp_path, PARITY_DSH=str(root)))


def test_locate_good_checkout(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "dsh")
    node = _script(tmp_path / "node-bin" / "node", "v22.20.0")
    install = dsh.locate(_env(tmp_path, PARITY_DSH=str(root), PARITY_NODE=str(node)))
    assert install == Install("checkout", root.resolve(), "0.3.1", str(node), "v22.20.0")
    assert install.stamp() == {
        "name": "DeepSeek Harness",
        "version": "0.3.1",
        "layout": "checkout",
    }
    assert "0.3.1" in install.describe()
    assert "v22.20.0" in install.describe()


def test_locate_checkout_finds_node_on_path(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "dsh")
    node = _script(tmp_path / "node-bin" / "node", "v24.0.0")
    install = dsh.locate({"PATH": str(node.parent), "PARITY_DSH": str(root)})
    assert install.layout == "checkout"
    assert install.node == str(node)
    assert install.node_version == "v24.0.0"


def test_locate_installed_dsh_from_parity_dsh(tmp_path: Path) -> None:
    exe = _script(tmp_path / "tools" / "dsh", "0.2.0")
    install = dsh.locate(_env(tmp_path, PARITY_DSH=str(exe)))
    assert install.layout == "installed"
    assert install.path == exe.resolve()
    assert install.version == "0.2.0"
    assert install.node is None
    assert install.stamp()["layout"] == "installed"


def test_locate_installed_dsh_on_path(tmp_path: Path) -> None:
    exe = _script(tmp_path / "tools" / "dsh", "0.2.0")
    install = dsh.locate({"PATH": str(exe.parent)})
    assert (install.layout, install.path, install.version) == ("installed", exe, "0.2.0")


def test_locate_failing_dsh_version(tmp_path: Path) -> None:
    exe = tmp_path / "tools" / "dsh"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\necho boom >&2\nexit 3\n", encoding="utf-8")
    exe.chmod(0o755)
    with pytest.raises(DshNotFound, match="exited 3: boom"):
        dsh.locate(_env(tmp_path, PARITY_DSH=str(exe)))


def test_locate_parity_dsh_nonexistent(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "dsh"
    with pytest.raises(DshNotFound, match="neither a dsh executable nor a DSH checkout"):
        dsh.locate(_env(tmp_path, PARITY_DSH=str(missing)))


def test_locate_parity_dsh_not_executable(tmp_path: Path) -> None:
    plain = tmp_path / "dsh"
    plain.write_text("not executable\n", encoding="utf-8")
    with pytest.raises(DshNotFound, match="neither"):
        dsh.locate(_env(tmp_path, PARITY_DSH=str(plain)))


def test_locate_nothing_anywhere(tmp_path: Path) -> None:
    with pytest.raises(DshNotFound) as info:
        dsh.locate(_env(tmp_path))
    assert "PARITY_DSH" in str(info.value)
    assert "no dsh on PATH" in str(info.value)


def test_locate_blank_parity_dsh_falls_back_to_path(tmp_path: Path) -> None:
    with pytest.raises(DshNotFound, match="PARITY_DSH is unset"):
        dsh.locate(_env(tmp_path, PARITY_DSH="  "))


# -- launch ------------------------------------------------------------------------------


def _good_install(tmp_path: Path) -> Install:
    root = _checkout(tmp_path / "dsh")
    node = _script(tmp_path / "node-bin" / "node", "v22.20.0")
    return dsh.locate(_env(tmp_path, PARITY_DSH=str(root), PARITY_NODE=str(node)))


def test_launch_checkout(tmp_path: Path) -> None:
    install = _good_install(tmp_path)
    root = install.path
    home = tmp_path / "home"
    kit = dsh.launch(
        install,
        llm_base="http://127.0.0.1:4321/",
        home=home,
        catalog=CATALOG,
        env={"DSH_TELEMETRY_DISABLED": "1", "DSH_PERMISSION_MODE": "read-only"},
    )
    loader = (root / "node_modules" / "tsx" / "dist" / "loader.mjs").resolve()
    assert kit.argv == (
        install.node,
        "--import",
        loader.as_uri(),
        str(root / dsh.CHECKOUT_BIN),
        "--config",
        str(home / "dsh-composition.yml"),
    )
    assert kit.argv[2].startswith("file:")
    assert kit.env == {
        "PARITY_STREAM_BASE_URL": "http://127.0.0.1:4321",
        "DSH_HOME": str(home / ".dsh"),
        "DSH_AGENTS_HOME": str(home / ".agents"),
        "DSH_PERMISSION_MODE": "read-only",
        "DSH_TELEMETRY_DISABLED": "1",
        "TSX_TSCONFIG_PATH": str(root / "tsconfig.json"),
    }
    assert kit.paths == {"dsh": str(root)}
    assert set(kit.files) == {"dsh-composition.yml"}

    rows = dsh.load_composition(kit.files["dsh-composition.yml"])
    assert len(rows) == 1
    assert rows[0]["name"] == "@deepseek-ai/cordis-plugin-include"
    assert rows[0]["config"]["path"] == str(root / dsh.CHECKOUT_COMPOSITION)
    patches = rows[0]["config"]["patches"]
    app = next(p for p in patches if p.get("id") == "app")
    assert (app["config"]["provider"], app["config"]["model"]) == ("mock", "mock-1")
    assert app["config"]["persistenceRoot"] == str(home / "dsh-sessions")
    assert isinstance(app["config"]["mode"], JsExpr)
    (insert,) = [p for p in patches if "insert" in p]
    assert insert["insert"][0]["name"] == str(dsh.PLUGIN)


def test_launch_checkout_pins_permission_mode(tmp_path: Path) -> None:
    kit = dsh.launch(
        _good_install(tmp_path),
        llm_base="http://h:1",
        home=tmp_path / "home",
        catalog=CATALOG,
        env={},
    )
    assert kit.env["DSH_PERMISSION_MODE"] == "workspace-write"
    assert kit.env["PARITY_STREAM_BASE_URL"] == "http://h:1"


def test_launch_installed(tmp_path: Path) -> None:
    exe = _script(tmp_path / "tools" / "dsh", "0.2.0")
    install = dsh.locate(_env(tmp_path, PARITY_DSH=str(exe)))
    home = tmp_path / "home"
    kit = dsh.launch(install, llm_base="http://h:1/", home=home, catalog=CATALOG, env={"A": "b"})
    assert kit.argv == (str(exe), "--profile", "acp", "--patch", str(home / "dsh-patch.yml"))
    assert kit.env["PARITY_STREAM_BASE_URL"] == "http://h:1"
    assert kit.env["A"] == "b"
    assert kit.env["DSH_PERMISSION_MODE"] == "workspace-write"
    assert "TSX_TSCONFIG_PATH" not in kit.env
    assert dsh.load_composition(kit.files["dsh-patch.yml"]) == row_patches(
        dsh.load_composition(PROFILE),
        provider="mock",
        model="mock-1",
        sessions=home / "dsh-sessions",
        catalog=CATALOG,
    )
    assert kit.paths == {"dsh": str(exe.parent)}


# -- targets: the `launcher` key ---------------------------------------------------------

TABLE = {"family": "dsh", "dialect": "parity-stream", "fixture_tools": "stream"}


def test_parse_target_accepts_launcher_without_command() -> None:
    spec = parse_target("n", {**TABLE, "launcher": "dsh"}, "parity.toml")
    assert spec.launcher == "dsh"
    assert spec.command == ()


def test_parse_target_rejects_unknown_launcher() -> None:
    with pytest.raises(TargetConfigError) as info:
        parse_target("n", {**TABLE, "launcher": "rocket"}, "parity.toml")
    message = str(info.value)
    assert "'rocket'" in message
    assert "launcher" in message
    assert "'n'" in message


def test_parse_target_still_needs_command_without_launcher() -> None:
    with pytest.raises(TargetConfigError, match="`command` is required"):
        parse_target("n", TABLE, "parity.toml")


def test_builtin_native_uses_dsh_launcher() -> None:
    native = load_config(REPO).targets["native"]
    assert native.launcher == "dsh"
    assert native.command == ()


def test_native_availability_without_dsh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", _empty_path(tmp_path))
    monkeypatch.delenv("PARITY_DSH", raising=False)
    native = load_config(REPO).targets["native"]
    with pytest.raises(DshNotFound) as info:
        dsh.locate()
    reason = availability(native, REPO)
    assert reason == str(info.value)
    assert reason is not None
    assert "PARITY_DSH" in reason


def test_native_availability_with_fake_dsh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = _script(tmp_path / "tools" / "dsh", "0.2.0")
    monkeypatch.setenv("PATH", _empty_path(tmp_path))
    monkeypatch.setenv("PARITY_DSH", str(exe))
    native = load_config(REPO).targets["native"]
    assert availability(native, REPO) is None


def test_plan_native_with_fake_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _checkout(tmp_path / "dsh")
    node = _script(tmp_path / "node-bin" / "node", "v22.20.0")
    monkeypatch.setenv("PARITY_DSH", str(root))
    monkeypatch.setenv("PARITY_NODE", str(node))
    native = load_config(REPO).targets["native"]
    home = tmp_path / "home"
    launch = plan(native, repo=REPO, llm_base="http://h:1/", workdir=tmp_path / "w", home=home)
    assert launch.argv[0] == str(node)
    assert launch.env["DSH_TELEMETRY_DISABLED"] == "1"
    assert launch.env["PARITY_STREAM_BASE_URL"] == "http://h:1"
    assert launch.stamp == {"name": "DeepSeek Harness", "version": "0.3.1", "layout": "checkout"}
    assert launch.paths == {"dsh": str(root.resolve())}
    assert "dsh-composition.yml" in launch.files


def test_native_runs_keep_what_node_and_tsx_compile_outside_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from parity.driver.run import _link
    from parity.targets.native_cache import compile_cache

    root = _checkout(tmp_path / "dsh")
    monkeypatch.setenv("PARITY_DSH", str(root))
    monkeypatch.setenv("PARITY_NODE", str(_script(tmp_path / "node-bin" / "node", "v22.20.0")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("PARITY_NATIVE_CACHE", raising=False)
    native = load_config(REPO).targets["native"]
    run = tmp_path / "run"
    launch = plan(native, repo=REPO, llm_base="http://h:1/", workdir=run / "w", home=run / "h")
    cache = tmp_path / "xdg" / "acp-parity" / "native"
    assert launch.env["NODE_COMPILE_CACHE"] == str(cache / "node")
    # tsx keeps its cache in os.tmpdir()/tsx-<euid>: the run's TMPDIR links it out.
    assert launch.tmp_links == {f"tsx-{os.geteuid()}": str(cache / "tsx")}
    tmp = run / "tmp"
    tmp.mkdir(parents=True)
    _link(tmp, launch.tmp_links)
    (tmp / f"tsx-{os.geteuid()}" / "entry").write_text("compiled")
    import shutil

    shutil.rmtree(run)  # as the driver removes a finished run
    assert (cache / "tsx" / "entry").read_text() == "compiled"
    # Off (the start-up bench's other side): each run compiles afresh, as before.
    monkeypatch.setenv("PARITY_NATIVE_CACHE", "off")
    launch = plan(native, repo=REPO, llm_base="http://h:1/", workdir=run / "w", home=run / "h")
    assert "NODE_COMPILE_CACHE" not in launch.env and not launch.tmp_links
    assert compile_cache({"PARITY_NATIVE_CACHE": "/c"}) == Path("/c")
    assert compile_cache({"HOME": "/home/u"}) == Path("/home/u/.cache/acp-parity/native")


# -- two natives: versions, the registry wheel, bad executables -----------------------


def test_a_dsh_outside_the_targets_versions_is_refused_with_the_reason(tmp_path: Path) -> None:
    exe = _script(tmp_path / "tools" / "dsh", "0.1.0-rc.8")
    seek = dsh.Seek(versions=">=0.2.0a0")
    with pytest.raises(
        DshNotFound, match=r"DSH 0\.1\.0-rc\.8, .* not a version this target runs \(>=0\.2\.0a0\)"
    ):
        dsh.locate(_env(tmp_path, PARITY_DSH=str(exe)), seek)
    assert dsh.locate(_env(tmp_path, PARITY_DSH=str(exe)), dsh.Seek(versions="==0.1.0rc8"))


def test_a_foreign_executable_is_not_a_dsh(tmp_path: Path) -> None:
    exe = _script(tmp_path / "tools" / "dsh", "GNU bash, version 5.2")
    with pytest.raises(DshNotFound, match="not a DSH version"):
        dsh.locate(_env(tmp_path, PARITY_DSH=str(exe)), dsh.Seek(versions=">=0.2.0a0"))


def test_a_truncated_executable_says_why(tmp_path: Path) -> None:
    exe = tmp_path / "dsh"
    exe.write_bytes(b"\x7fELF\x02\x01\x01\x00")  # the first bytes of an executable, cut off
    exe.chmod(0o755)
    with pytest.raises(DshNotFound, match=r"failed: .*Exec format error"):
        dsh.locate(_env(tmp_path, PARITY_DSH=str(exe)))


def test_a_target_without_search_looks_only_at_its_variable(tmp_path: Path) -> None:
    exe = _script(tmp_path / "tools" / "dsh", "0.1.0-rc.8")
    seek = dsh.Seek(env="PARITY_DSH_RC8", versions="==0.1.0rc8", search=False)
    with pytest.raises(DshNotFound, match="PARITY_DSH_RC8 is unset"):
        dsh.locate({"PATH": str(exe.parent)}, seek)


def _fake_runtime(tmp_path: Path, body: str) -> Path:
    """A fake `deepseek_harness_runtime` package on sys.path, whose lookup is `body`."""
    package = tmp_path / "site" / "deepseek_harness_runtime"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(body, encoding="utf-8")
    return package.parent


@pytest.fixture
def _fake_runtime_forgotten() -> Iterator[None]:
    """A fake `deepseek_harness_runtime` a test imports must not stay in `sys.modules`
    (monkeypatch's `delitem` of a module not yet imported restores nothing): every later
    native run in the process would launch its fake executable."""
    ours = "deepseek_harness_runtime"
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] == ours}
    yield
    for name in [k for k in sys.modules if k.split(".")[0] == ours]:
        del sys.modules[name]
    sys.modules.update(saved)


@pytest.mark.usefixtures("_fake_runtime_forgotten")
def test_the_registry_wheel_beside_the_harness_is_found_without_parity_dsh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exe = _script(tmp_path / "runtime" / "dsh-runtime", "0.2.1-rc.2")
    site = _fake_runtime(tmp_path, f"def bundled_runtime_path():\n    return {str(exe)!r}\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "deepseek_harness_runtime", raising=False)
    monkeypatch.setattr(dsh, "_packaged", _real_packaged)
    # Where it runs from under /tmp is test_dsh_outside_tmp's.
    monkeypatch.setattr(dsh, "outside_private_tmp", lambda path: path)
    install = dsh.locate(_env(tmp_path), dsh.Seek(versions=">=0.2.0a0"))
    assert (install.layout, install.path, install.version) == ("installed", exe, "0.2.1-rc.2")


@pytest.mark.usefixtures("_fake_runtime_forgotten")
def test_a_platform_without_the_wheel_gets_its_lookup_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _fake_runtime(
        tmp_path,
        "def bundled_runtime_path():\n"
        "    raise FileNotFoundError('no bundled DeepSeek Harness SDK runtime '\n"
        "        'exists for this platform')\n",
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "deepseek_harness_runtime", raising=False)
    monkeypatch.setattr(dsh, "_packaged", _real_packaged)
    with pytest.raises(DshNotFound, match=r"cannot run here: no bundled .* for this platform"):
        dsh.locate(_env(tmp_path))


def test_dsh_table_of_a_target_is_checked() -> None:
    spec = parse_target(
        "n", {**TABLE, "launcher": "dsh", "dsh": {"env": "X", "versions": "==1"}}, "p"
    )
    assert spec.dsh == dsh.Seek(env="X", versions="==1")
    for bad in ({"versions": "newest"}, {"env": ""}, {"search": "yes"}, {"other": 1}, "x"):
        with pytest.raises(TargetConfigError, match="dsh"):
            parse_target("n", {**TABLE, "launcher": "dsh", "dsh": bad}, "p")


def test_off_keeps_a_target_from_running_even_with_the_wheel_installed(tmp_path: Path) -> None:
    exe = _script(tmp_path / "tools" / "dsh", "0.2.1-rc.2")
    with pytest.raises(DshNotFound, match="PARITY_DSH=off: this target does not run here"):
        dsh.locate({"PATH": str(exe.parent), "PARITY_DSH": "off"})


def test_without_builtin_tools_hook_rows_follow_the_launch_directory(tmp_path: Path) -> None:
    """rc.8's hook bridges and the bash executor they run hooks through stay on when the
    workdir holds a hooks file (a `!!js` native evaluates when it starts); the model's
    bash stays off (`toolBash: false`). Without a hook row the executor is simply off."""
    base: list[dict[str, Any]] = [
        {"id": "bash", "name": "@deepseek-ai/dsh-bash-sandbox"},
        {"id": "tool-fs", "name": "@deepseek-ai/dsh-tool-fs"},
        {"id": "hooks-cc", "name": "@deepseek-ai/dsh-hooks-claude-code"},
        {"id": "hooks-codex", "name": "@deepseek-ai/dsh-hooks-codex"},
        {"id": "app", "name": "@deepseek-ai/dsh-acp-demo", "config": {}},
    ]
    common: dict[str, Any] = {"provider": "p", "model": "m", "sessions": tmp_path}
    patches = row_patches(base, families=(), **common)
    off = {p["id"]: p.get("disabled") for p in patches if "id" in p}
    assert off["tool-fs"] is True
    for row in ("bash", "hooks-cc", "hooks-codex"):
        assert isinstance(off[row], JsExpr) and off[row] == dsh_rows.HOOKS_PRESENT
    (app,) = [p for p in patches if p.get("id") == "app"]
    assert app["config"]["toolBash"] is False
    without = [row for row in base if not row["id"].startswith("hooks")]
    bare = row_patches(without, families=(), **common)
    assert [p.get("disabled") for p in bare if p.get("id") == "bash"] == [True]
    assert all(
        "disabled" not in p for p in row_patches(base, families=FAMILIES, **common) if "id" in p
    )


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
@pytest.mark.parametrize("present", [None, "hooks.json", "codex-hooks.json"])
def test_hooks_present_expression_reads_the_launch_directory(
    tmp_path: Path, present: str | None
) -> None:
    if present is not None:
        (tmp_path / present).write_text("{}", encoding="utf-8")
    node = shutil.which("node")
    assert node is not None
    shown = subprocess.run(
        [node, "-e", f"console.log({dsh_rows.HOOKS_PRESENT})"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert shown == ("true" if present is None else "false")  # `disabled`: no file, no rows
