"""What one native run boots: DSH's shipped composition, with the run's row edits.

Pure functions over a cordis composition's rows (plain dicts, `!!js` expressions kept
as `JsExpr`). Both layouts of the launch kit (`parity.targets.dsh`) use the same edits:

- an installed `dsh` gets them as a `--patch` list over the rows its `acp` profile
  prints with `--dump-config` (`row_patches` itself);
- a source checkout gets a generated composition that includes the checkout's shipped
  one with the edits as the include's patches (`checkout_composition`).

The edits are chosen by plugin name, never by row id, so they follow a DSH version that
renames or regroups its rows: the real model and compaction rows off, of the rows that
make built-in tools only those of the scenario's families on, the bridge on the
scenario's route, session persistence uncompressed in the run's home, and our
parity-stream plugin inserted.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from parity.scenario.families import FAMILIES

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
"""The rows that make built-in tools: every model-facing tool of the shipped composition
(bash, the fs tools, jobs, goals, skills, web, subagents, workflow, ralph, todo, and
0.2.x's `exit_plan_mode`) and the hook rows that run around them. Each run mounts only
those of the scenario's families (`FAMILY_PLUGINS`); one that no family claims is
mounted only when every family is on. `INFRASTRUCTURE_ROWS` are not tool rows."""

HOOK_ROW_PREFIXES = ("@deepseek-ai/dsh-hooks-", "@deepseek-ai/dsh-bash-")
"""The hook bridges (rc.8's `hooks.json` and `codex-hooks.json`) and the bash executor
they run hook commands through (`ctx.shell`; the model's `bash` is another row). Where the
composition has a hook bridge, a run without built-in tools keeps these rows on exactly
when its launch directory (the workdir) holds a hooks file, so a scenario's `files:`
decides, as a user's launch directory does (docs/native.md, "Hooks")."""

INFRASTRUCTURE_ROWS = ("@deepseek-ai/dsh-tool-call-timeout-policy",)
"""Rows whose plugin name looks like a tool row but that make no tool: the timeout
wrapper of tools that declare a budget (a fixture tool declares none). As shipped."""

SUBAGENT_SERVICE = ("@deepseek-ai/dsh-subagent", "@deepseek-ai/dsh-subagent-spawn-in-process")
"""The subagent service and its spawn provider: no tool of their own, but `workflow` and
`ralph` do not start without them."""

FAMILY_PLUGINS: Mapping[str, tuple[str, ...]] = {
    "bash": ("@deepseek-ai/dsh-tool-bash", "@deepseek-ai/dsh-tool-pwsh", "@deepseek-ai/dsh-bash-"),
    "fs": ("@deepseek-ai/dsh-tool-fs",),
    "fs-search": ("@deepseek-ai/dsh-tool-fs-search",),
    "jobs": ("@deepseek-ai/dsh-tool-jobs",),
    "todo": ("@deepseek-ai/dsh-tool-todo",),
    "working-directory": ("@deepseek-ai/dsh-tool-working-directory",),
    "plan-mode": ("@deepseek-ai/dsh-plan-mode",),
    "skill": ("@deepseek-ai/dsh-tool-skill",),
    "web": ("@deepseek-ai/dsh-tool-web",),
    "goal": ("@deepseek-ai/dsh-tool-goal",),
    "workflow": (
        "@deepseek-ai/dsh-tool-workflow",
        "@deepseek-ai/dsh-workflow-",
        *SUBAGENT_SERVICE,
    ),
    "ralph": ("@deepseek-ai/dsh-tool-ralph", "@deepseek-ai/dsh-workflow-", *SUBAGENT_SERVICE),
    "subagent": (
        *SUBAGENT_SERVICE,
        "@deepseek-ai/dsh-subagent-fork-in-process",
        "@deepseek-ai/dsh-tool-subagent-control",
        "@deepseek-ai/dsh-tool-subagent-control/list-agents",
        "@deepseek-ai/dsh-tool-subagent",
        "@deepseek-ai/dsh-tool-subagent-report",
    ),
    "hooks": ("@deepseek-ai/dsh-hooks-", "@deepseek-ai/dsh-bash-sandbox"),
}
"""Family (`parity.scenario.families`) -> the plugin names of its rows (a name ending in
`-` is a prefix). Found by running each native with one group of rows on at a time
(docs/native.md, "The model's view"): `bash` needs the sandbox executor row beside the
tool row (0.1.0-rc.8's tool lives in the app row, which mounts it only with the executor);
`workflow` and `ralph` need the subagent service and its spawn provider, which make no
tool of their own (and `ralph` the workflow engine); the hook rows need the shell of
bash's executor row, which on 0.1.0-rc.8 mounts the app row's `bash` too (so a hooks
scenario names `[bash, hooks]`); 0.1.0-rc.8 has no `fs-search`, `web`,
`working-directory`, `plan-mode` rows, 0.2.1-rc.2 no `ralph` and no hook rows."""

APP_FAMILY_CONFIG: Mapping[str, Mapping[str, Any]] = {
    "bash": {"toolBash": False},
    "jobs": {"toolJobs": False},
    "goal": {"goals": False},
    "skill": {"skills": {"enabled": False}},
}
"""A checkout app row's own tool switches (0.1.0-rc.8: job control, goals, skills are
config of the app row, not rows), set off when their family is off. `toolBash` matters
when the bash executor stays on for hooks (`HOOK_ROW_PREFIXES`) without the bash family."""

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


def row_families(name: str) -> tuple[str, ...]:
    """The families whose rows include plugin `name` (several share the subagent service)."""
    return tuple(
        family
        for family, plugins in FAMILY_PLUGINS.items()
        if any(name == p or (p.endswith("-") and name.startswith(p)) for p in plugins)
    )


def off_row(name: str, families: Collection[str]) -> bool:
    """Whether a run with these built-in tool families switches plugin `name`'s row off:
    the real model and compaction rows always; a tool row unless one of its families is
    on (a tool row no family claims: unless every family is on)."""
    if name.startswith(OFF_ROW_PREFIXES):
        return True
    if name in INFRASTRUCTURE_ROWS:
        return False
    owners = row_families(name)
    if owners:
        return not any(family in families for family in owners)
    return name.startswith(TOOL_ROW_PREFIXES) and not set(FAMILIES) <= set(families)


def row_patches(
    base_rows: Sequence[Mapping[str, Any]],
    *,
    provider: str,
    model: str,
    sessions: Path,
    plugin: Path = PLUGIN,
    families: Collection[str] = FAMILIES,
    catalog: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The patch list that turns DSH's shipped composition into one run's (see module).

    `families` are the built-in tool families the run mounts: their rows stay as shipped,
    every other tool row is switched off (`off_rows`).

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
    # Without the hooks family, rc.8's hook bridges and their executor still run exactly
    # when the launch directory holds a hooks file, as a user's would (`HOOKS_PRESENT`).
    hooks = "hooks" not in families and any(
        str(r.get("name")).startswith(HOOK_ROW_PREFIXES[0]) for r in rows
    )
    for row in rows:
        name = str(row.get("name", ""))
        if off_row(name, families) and row.get("disabled") is not True:
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
            for family, switch in APP_FAMILY_CONFIG.items():
                if family not in families:
                    config |= switch
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
    families: Collection[str] = FAMILIES,
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
        families=families,
        catalog=catalog,
    )
    return [
        {
            "id": "parity-base",
            "name": "@deepseek-ai/cordis-plugin-include",
            "config": {"path": str(base_path), "patches": patches},
        }
    ]
