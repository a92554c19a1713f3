"""acp-plus configuration: TOML file -> validated, frozen `Config`.

The rules live in `acp_plus/settings/config_schema.py` (`SCHEMA` and its validator); this module
turns a document that passed into the frozen `Config`. Everything except `load_file` is
pure.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from acp_plus.core.approvals.settings import ApprovalSettings
from acp_plus.core.context import (
    DEFAULT_IDENTITY,
    DEFAULT_PERSONA,
    InstructionSettings,
    persona_problem,
)
from acp_plus.core.tools.families import DEFAULT_FAMILIES
from acp_plus.protocol.model_control import Effort
from acp_plus.settings.approvals_config import build_approvals
from acp_plus.settings.config_schema import SCHEMA, ConfigError, check


def _default_providers() -> dict[str, Any]:
    """The `deepseek` route, in config form, from the provider's own model list (one
    source of truth for ids, context windows and efforts)."""
    from acp_plus.core.llm.openai_chat import DEEPSEEK_MODELS, OpenAIChatConfig

    base = OpenAIChatConfig()
    models = []
    for info in DEEPSEEK_MODELS:
        model: dict[str, Any] = {"id": info["id"], "name": info["name"]}
        if "contextWindow" in info:
            model["context_window"] = info["contextWindow"]
        if "inputModalities" in info:
            model["input_modalities"] = list(info["inputModalities"])
        if "reasoning" in info:
            model["reasoning_efforts"] = [dict(e) for e in info["reasoning"]["efforts"]]
            if "defaultEffort" in info["reasoning"]:
                model["default_effort"] = info["reasoning"]["defaultEffort"]
        models.append(model)
    table = {
        "api": "openai-chat",
        "name": base.name,
        "base_url": base.base_url,
        "api_key_env": base.api_key_env,
        "models": models,
    }
    return {base.id: table}


@dataclass(frozen=True)
class ModelSpec:
    """A model as the config declares it (catalog providers get theirs at run time)."""

    id: str
    name: str
    description: str | None = None
    context_window: int | None = None
    input_modalities: tuple[str, ...] = ("text",)
    reasoning_efforts: tuple[Effort, ...] = ()
    default_effort: str | None = None


@dataclass(frozen=True)
class ProviderSpec:
    """One `[providers.<route>]` table."""

    route: str
    api: str
    name: str
    base_url: str | None = None
    api_key_env: str | None = None
    models: tuple[ModelSpec, ...] = ()
    max_tokens: int | None = None
    request_timeout: float | None = None
    stream_idle_timeout: float | None = None
    retries: int = 0


# Per-api defaults of the transport keys (the values the providers used before they were
# configurable). None = no limit / not sent.
TRANSPORT_DEFAULTS: dict[str, dict[str, Any]] = {
    "openai-chat": {
        "max_tokens": None,
        "request_timeout": 600.0,
        "stream_idle_timeout": 600.0,
        "retries": 2,
    },
    "parity-stream": {
        "max_tokens": None,
        "request_timeout": None,
        "stream_idle_timeout": None,
        "retries": 0,
    },
}


@dataclass(frozen=True)
class Config:
    """The effective configuration of one acp-plus process."""

    home: Path
    provider: str | None = None
    model: str | None = None
    session_list_page_size: int = 100
    profile: str = "plus"
    enable_session_load: bool = True
    enable_additional_directories: bool = True
    sandbox: str = "workspace-write"
    builtin_tools: tuple[str, ...] = DEFAULT_FAMILIES
    """The built-in tool families offered, by name (`acp_plus/core/tools/families.py`)."""
    hooks: bool = False
    """Run `hooks.json` / `codex-hooks.json` of the launch directory around every tool
    call, as native 0.1.0-rc.8 does; 0.2.1-rc.2 (the reference) mounts no hooks."""
    mcp_startup_timeout: float = 30.0
    max_frame_bytes: int = 64 * 1024 * 1024
    identity: str = DEFAULT_IDENTITY
    persona: str = DEFAULT_PERSONA
    runtime_context: bool = True
    workspace_context: InstructionSettings = field(default_factory=InstructionSettings)
    providers: tuple[ProviderSpec, ...] = field(default_factory=tuple)
    approvals: ApprovalSettings = field(default_factory=ApprovalSettings)
    """The approval features (docs/approvals.md); the plus profile only."""

    @property
    def increments(self) -> bool:
        """True in the `plus` profile: the §6 increments exist at all (methods registered,
        capabilities advertised); `features.enabled` adds each increment's own flag."""
        return self.profile == "plus"

    def provider_spec(self, route: str) -> ProviderSpec | None:
        """The configured table for `route`, if any."""
        return next((p for p in self.providers if p.route == route), None)

    def to_json(self) -> dict[str, Any]:
        """Plain data for `--dump-config` (stable key order, paths as strings)."""
        data = asdict(self)
        data["home"] = str(self.home)
        return data


def _model(raw: dict[str, Any], where: str) -> ModelSpec:
    efforts = tuple(
        Effort(e["id"], e.get("name", e["id"]), e.get("description"))
        for e in raw.get("reasoning_efforts", [])
    )
    ids = [e.id for e in efforts]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{where}.reasoning_efforts: ids must be unique")
    default = raw.get("default_effort")
    if default is not None and default not in ids:
        raise ConfigError(f"{where}.default_effort: {default!r} is not a declared effort")
    return ModelSpec(
        id=raw["id"],
        name=raw.get("name", raw["id"]),
        description=raw.get("description"),
        context_window=raw.get("context_window"),
        input_modalities=tuple(raw.get("input_modalities", ["text"])),
        reasoning_efforts=efforts,
        default_effort=default,
    )


def _provider(route: str, raw: dict[str, Any]) -> ProviderSpec:
    where = f"providers.{route}"
    if raw["api"] == "parity-stream":
        if "base_url" not in raw:
            raise ConfigError(f"{where}: a parity-stream provider needs base_url")
        if raw.get("models"):
            raise ConfigError(f"{where}.models: parity-stream models come from the catalog")
        if "max_tokens" in raw:
            raise ConfigError(
                f"{where}.max_tokens: parity-stream/1 requests carry no output limit; "
                "the catalog's script decides"
            )
    if raw["api"] == "openai-chat":
        for key in ("base_url", "api_key_env"):
            if key not in raw:
                raise ConfigError(f"{where}: an openai-chat provider needs {key}")
        if not raw.get("models"):
            raise ConfigError(f"{where}.models: an openai-chat provider needs at least one model")
    models = tuple(_model(m, f"{where}.models[{i}]") for i, m in enumerate(raw.get("models", [])))
    if len({m.id for m in models}) != len(models):
        raise ConfigError(f"{where}.models: model ids must be unique")
    defaults = TRANSPORT_DEFAULTS[raw["api"]]
    timeouts = {
        key: float(raw[key]) if key in raw else defaults[key]
        for key in ("request_timeout", "stream_idle_timeout")
    }
    return ProviderSpec(
        route=route,
        api=raw["api"],
        name=raw.get("name", route),
        base_url=raw.get("base_url"),
        api_key_env=raw.get("api_key_env"),
        models=models,
        max_tokens=raw.get("max_tokens", defaults["max_tokens"]),
        retries=raw.get("retries", defaults["retries"]),
        **timeouts,
    )


def build(raw: dict[str, Any], home: Path) -> Config:
    """Validate a parsed TOML document and build the effective `Config`."""
    check(raw, SCHEMA, "")
    explicit = "providers" in raw
    tables: dict[str, Any] = raw["providers"] if explicit else _default_providers()
    providers = tuple(_provider(route, table) for route, table in tables.items())
    provider = raw.get("provider")
    model = raw.get("model")
    if not explicit and provider is None and model is None:
        # Out of the box: the first DeepSeek model, so a key is all a user needs.
        provider = next(iter(tables))
        model = tables[provider]["models"][0]["id"]
    if (provider is None) != (model is None):
        raise ConfigError("provider and model must be set together")
    persona = raw.get("persona", DEFAULT_PERSONA)
    if (problem := persona_problem(persona)) is not None:
        raise ConfigError(f"persona: {problem}")
    has_catalog = any(p.api == "parity-stream" for p in providers)
    if provider is not None and not has_catalog:
        spec = next((p for p in providers if p.route == provider), None)
        if spec is None:
            raise ConfigError(f"provider: {provider!r} is not a configured route")
        if all(m.id != model for m in spec.models):
            raise ConfigError(f"model: {model!r} is not a model of provider {provider!r}")
    return Config(
        home=home,
        provider=provider,
        model=model,
        session_list_page_size=raw.get("session_list_page_size", 100),
        profile=raw.get("profile", "plus"),
        enable_session_load=raw.get("enable_session_load", True),
        enable_additional_directories=raw.get("enable_additional_directories", True),
        sandbox=raw.get("sandbox", "workspace-write"),
        builtin_tools=_families(raw.get("builtin_tools", True)),
        hooks=raw.get("hooks", False),
        mcp_startup_timeout=float(raw.get("mcp_startup_timeout", 30.0)),
        max_frame_bytes=raw.get("max_frame_bytes", 64 * 1024 * 1024),
        identity=raw.get("identity", DEFAULT_IDENTITY),
        persona=persona,
        runtime_context=raw.get("runtime_context", True),
        workspace_context=_instruction_settings(raw.get("workspace_context", {})),
        providers=providers,
        approvals=build_approvals(raw.get("approvals", {})),
    )


def _families(value: bool | list[str]) -> tuple[str, ...]:
    """`builtin_tools` as family names: true is every family acp-plus offers by default
    (native 0.2.1-rc.2's; `ralph` only when named)."""
    if isinstance(value, bool):
        return DEFAULT_FAMILIES if value else ()
    return tuple(dict.fromkeys(value))


def _instruction_settings(table: dict[str, Any]) -> InstructionSettings:
    for key in ("files", "local_files"):
        for name in table.get(key, []):
            if "/" in name or "\\" in name or name in (".", ".."):
                raise ConfigError(f"workspace_context.{key}: {name!r} is not a file name")
    defaults = InstructionSettings()
    return InstructionSettings(
        max_bytes=table.get("max_bytes", defaults.max_bytes),
        max_source_bytes=table.get("max_source_bytes", defaults.max_source_bytes),
        files=tuple(table.get("files", defaults.files)),
        local_files=tuple(table.get("local_files", defaults.local_files)),
        root_markers=tuple(table.get("root_markers", defaults.root_markers)),
    )


def default_home(env: dict[str, str] | os._Environ[str]) -> Path:
    """`$ACP_PLUS_HOME`, else `$XDG_DATA_HOME/acp-plus`, else `~/.local/share/acp-plus`."""
    if env.get("ACP_PLUS_HOME"):
        return Path(env["ACP_PLUS_HOME"])
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "acp-plus"


def load_file(path: Path | None, home: Path) -> Config:
    """Read and validate a TOML file (or the defaults when `path` is None)."""
    if path is None:
        return build({}, home)
    import tomllib  # only when a file is given: start-up without one stays lean

    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    try:
        return build(raw, home)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
