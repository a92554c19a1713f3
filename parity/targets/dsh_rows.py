"""What one native run boots: DSH's shipped composition, with the run's row edits.

Pure functions over a cordis composition's rows (plain dicts, `!!js` expressions kept
as `JsExpr`). Both layouts of the launch kit (`parity.targets.dsh`) use the same edits:

- an installed `dsh` gets them as a `--patch` list over the rows its `acp` profile
  prints with `--dump-config` (`row_patches` itself);
- a source checkout gets a generated composition that includes the checkout's shipped
  one with the edits as the include's patches (`checkout_composition`).

The edits are chosen by plugin name, never by row id, so they follow a DSH version that
renames or regroups its rows: the real model and compaction rows off, the tool rows off
when the scenario calls no built-in tool, the bridge on the scenario's route, session
persistence uncompressed in the run's home, and our parity-stream plugin inserted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

ACP_ROWS = ("@deepseek-ai/dsh-acp-demo", "@deepseek-ai/dsh-acp")
"""Plugin names of the row that mounts the ACP bridge: the app row of a checkout's
composition (which owns persistence too), and the bare bridge row of the `acp` profile."""
PERSISTENCE_ROW = "@deepseek-ai/dsh-session-persistence-jsonl"
"""The `acp` profile's own session persistence row (0.2.x; a checkout's app row owns it)."""
OFF_ROW_PREFIXES = ("@deepseek-ai/dsh-llm-", "@deepseek-ai/dsh-compaction-")
"""Rows disabled in every run. `dsh-llm-*` rows register real model adapters: only the
fake's routes may exist (a duplicate route would refuse to register). `dsh-compaction-*`
rows summarize history when the context fills: against a scenario's small scripted
context window (1024 tokens by default) native's own prompt would trigger an unscripted
compaction call that eats the next script entry; native's own parity harness mounts no
compaction either (docs/contract.md §7.1)."""

TOOL_ROW_PREFIXES = (
    "@deepseek-ai/dsh-tool-",
    "@deepseek-ai/dsh-bash-",
    "@deepseek-ai/dsh-subagent",
    "@deepseek-ai/dsh-workflow-",
    "@deepseek-ai/dsh-hooks-",
    "@deepseek-ai/dsh-plan-mode",
)
"""Rows disabled when a scenario calls no built-in tool: every model-facing tool of the
shipped composition (bash, the fs tools, jobs, goals, skills, web, subagents, workflow,
ralph, todo, and 0.2.x's `exit_plan_mode`) and the hook rows that need the bash shell.
With them off, native shows the model the same tools acp-plus does in such a run: only
the scenario's fixture tools (docs/native.md, "The model's view")."""

HOOK_ROW_PREFIXES = ("@deepseek-ai/dsh-hooks-", "@deepseek-ai/dsh-bash-")
"""The hook bridges (rc.8's `hooks.json` and `codex-hooks.json`) and the bash executor
they run hook commands through (`ctx.shell`; the model's `bash` is another row). Where the
composition has a hook bridge, a run without built-in tools keeps these rows on exactly
when its launch directory (the workdir) holds a hooks file, so a scenario's `files:`
decides, as a user's launch directory does (docs/native.md, "Hooks")."""

TOOLS_OFF_CONFIG = {
    "toolJobs": False,
    "goals": False,
    "skills": {"enabled": False},
    "toolBash": False,
}
"""A checkout app row's own tool switches (job control, goals, skills, the model's bash),
off with the rows: `toolBash` matters once the bash executor stays on for hooks."""

PARITY_ROW_ID = "parity-stream"
SESSION_LIST_PAGE_SIZE = 2
PLUGIN = Path(__file__).resolve().parent / "adapters" / "dsh" / "parity-stream.mjs"
"""Our parity-stream plugin, mounted by absolute path into every native run."""


class DshNotFound(Exception):
    """No usable DSH here (or a composition this kit cannot edit); the message says
    exactly what is missing."""


class JsExpr(str):
    """A `!!js` scalar of a cordis composition: kept verbatim, emitted with its tag."""


HOOKS_PRESENT = JsExpr(
    "!['hooks.json', 'codex-hooks.json']"
    ".some(f => process.getBuiltinModule('node:fs').existsSync(f))"
)
"""`disabled` of the hook rows (`HOOK_ROW_PREFIXES`): true unless the launch directory
holds a hooks file."""


class _Loader(yaml.SafeLoader):
    pass


class _Dumper(yaml.SafeDumper):
    pass


_JS_TAG = "tag:yaml.org,2002:js"
_Loader.add_constructor(_JS_TAG, lambda loader, node: JsExpr(loader.construct_scalar(node)))  # type: ignore[arg-type]
_Dumper.add_representer(JsExpr, lambda dumper, value: dumper.represent_scalar(_JS_TAG, str(value)))


def load_composition(text: str) -> list[dict[str, Any]]:
    """A cordis composition's rows (`!!js` expressions preserved as `JsExpr`)."""
    try:
        rows = yaml.load(text, Loader=_Loader)  # a SafeLoader with one extra tag
    except yaml.YAMLError as exc:
        raise DshNotFound(f"the DSH composition is not YAML: {exc}") from None
    if not isinstance(rows, list):
        raise DshNotFound("the DSH composition is not a list of rows")
    return [row for row in rows if isinstance(row, dict)]


def dump_composition(rows: Any) -> str:
    """YAML for a composition or a patch, `!!js` tags intact."""
    return yaml.dump(rows, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def row_patches(
    base_rows: Sequence[Mapping[str, Any]],
    *,
    provider: str,
    model: str,
    sessions: Path,
    plugin: Path = PLUGIN,
    builtin_tools: bool = True,
    catalog: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The patch list that turns DSH's shipped composition into one run's (see module).

    A config patch replaces a row's whole config, so each edited row's shipped config is
    restated with only the route and persistence keys changed (persona and workspace
    settings stay as shipped). A row whose `disabled` is a `!!js` expression may be on
    at run time, so it is switched off like any other."""
    patches: list[dict[str, Any]] = []
    # A patch names its row by id: rows without one (an `insert` list) cannot be patched.
    rows = [row for row in base_rows if isinstance(row.get("id"), str)]
    acp = [row for row in rows if row.get("name") in ACP_ROWS]
    if not acp:
        raise DshNotFound(f"the DSH composition has no ACP row ({' or '.join(ACP_ROWS)})")
    off = OFF_ROW_PREFIXES if builtin_tools else OFF_ROW_PREFIXES + TOOL_ROW_PREFIXES
    hooks = not builtin_tools and any(
        str(r.get("name")).startswith(HOOK_ROW_PREFIXES[0]) for r in rows
    )
    for row in rows:
        name = str(row.get("name", ""))
        if name.startswith(off) and row.get("disabled") is not True:
            when = HOOKS_PRESENT if hooks and name.startswith(HOOK_ROW_PREFIXES) else True
            patches.append({"id": row["id"], "name": name, "disabled": when})
    for row in acp:
        config = dict(row.get("config") or {}) | {"provider": provider, "model": model}
        if row["name"] == ACP_ROWS[1]:
            # Small pages, as acp-plus's targets set them, so scenarios/sessions/list-paging
            # exercises the keyset cursor with a handful of sessions (contract 1.6).
            config["sessionListPageSize"] = SESSION_LIST_PAGE_SIZE
        if row["name"] == ACP_ROWS[0]:
            config |= {"persistenceRoot": str(sessions), "persistenceCompression": "none"}
            if not builtin_tools:
                config |= TOOLS_OFF_CONFIG
        patches.append({"id": row["id"], "name": row["name"], "config": config})
    for row in rows:
        if row.get("name") == PERSISTENCE_ROW:
            config = dict(row.get("config") or {}) | {"root": str(sessions), "compression": "none"}
            patches.append({"id": row["id"], "name": PERSISTENCE_ROW, "config": config})
    # The plugin registers the catalog's routes from its row config before its first
    # await: 0.2.x answers session/new while plugins still activate (parity-stream.mjs).
    ours: dict[str, Any] = {"id": PARITY_ROW_ID, "name": str(plugin)}
    if catalog is not None:
        ours["config"] = {"catalog": dict(catalog)}
    patches.append({"insert": [ours]})
    return patches


def checkout_composition(
    base_rows: Sequence[Mapping[str, Any]],
    base_path: Path,
    *,
    provider: str,
    model: str,
    sessions: Path,
    plugin: Path = PLUGIN,
    builtin_tools: bool = True,
    catalog: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The composition one checkout run boots: the shipped one at `base_path` included,
    with `row_patches` as the include's patches."""
    patches = row_patches(
        base_rows,
        provider=provider,
        model=model,
        sessions=sessions,
        plugin=plugin,
        builtin_tools=builtin_tools,
        catalog=catalog,
    )
    return [
        {
            "id": "parity-base",
            "name": "@deepseek-ai/cordis-plugin-include",
            "config": {"path": str(base_path), "patches": patches},
        }
    ]
