"""acp-plus configuration: TOML file -> validated, frozen `Config`.

One schema (`SCHEMA`, a JSON Schema subset) is the single source of truth: it is printed by
`--dump-config-schema` and it drives validation here, through a tiny validator so that
start-up never pays for importing `jsonschema`. Everything except `load_file` is pure.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from acp_plus.model_control import Effort

APIS = ("openai-chat", "parity-stream")
SANDBOXES = ("read-only", "workspace-write", "danger-full-access")

_EFFORT: dict[str, Any] = {
    "type": "object",
    "required": ["id"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "name": {"type": "string", "minLength": 1, "description": "Label; defaults to id."},
        "description": {"type": "string"},
    },
}

_MODEL: dict[str, Any] = {
    "type": "object",
    "required": ["id"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1, "description": "Model id sent to the API."},
        "name": {"type": "string", "minLength": 1, "description": "Label; defaults to id."},
        "description": {"type": "string"},
        "context_window": {"type": "integer", "minimum": 1},
        "input_modalities": {
            "type": "array",
            "items": {"type": "string", "enum": ["text", "image"]},
            "default": ["text"],
        },
        "reasoning_efforts": {"type": "array", "items": _EFFORT},
        "default_effort": {"type": "string", "description": "One of reasoning_efforts ids."},
    },
}

_PROVIDER: dict[str, Any] = {
    "type": "object",
    "required": ["api"],
    "additionalProperties": False,
    "properties": {
        "api": {"type": "string", "enum": list(APIS)},
        "base_url": {"type": "string", "minLength": 1},
        "api_key_env": {
            "type": "string",
            "minLength": 1,
            "description": "Environment variable holding the API key (openai-chat).",
        },
        "name": {"type": "string", "minLength": 1, "description": "Label; defaults to route."},
        "models": {"type": "array", "items": _MODEL},
        "max_tokens": {
            "type": "integer",
            "minimum": 1,
            "description": "openai-chat: `max_tokens` sent with every request (default: not "
            "sent, the provider's limit). Rejected for parity-stream (the protocol has no "
            "such field).",
        },
        "request_timeout": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Seconds per attempt to connect, send and get the answer's status "
            "(openai-chat: the SDK timeout, also each read; default 600). parity-stream "
            "default: no limit (connect 10).",
        },
        "stream_idle_timeout": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Seconds to wait for the next streamed chunk before the turn fails "
            "(default: 600 openai-chat, no limit parity-stream).",
        },
        "retries": {
            "type": "integer",
            "minimum": 0,
            "description": "openai-chat: the SDK's retries (connection errors, timeouts, 408, "
            "409, 429, 5xx; default 2). parity-stream: transport errors before any answer "
            "only, never a protocol failure (default 0).",
        },
    },
}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "acp-plus configuration (TOML)",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "provider": {"type": "string", "minLength": 1, "description": "Initial route."},
        "model": {"type": "string", "minLength": 1, "description": "Initial model."},
        "session_list_page_size": {"type": "integer", "minimum": 1, "default": 100},
        "enable_session_load": {"type": "boolean", "default": False},
        "enable_additional_directories": {"type": "boolean", "default": False},
        "sandbox": {"type": "string", "enum": list(SANDBOXES), "default": "workspace-write"},
        "builtin_tools": {"type": "boolean", "default": True},
        "providers": {
            "type": "object",
            "description": "Routes by id. When present it replaces the default `deepseek` "
            "route. A parity-stream table registers every catalog provider under its "
            "catalog id, plus the catalog's fixture tools.",
            "additionalProperties": _PROVIDER,
        },
    },
}


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


class ConfigError(Exception):
    """A user-caused configuration problem; the message names the file and key."""


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
    enable_session_load: bool = False
    enable_additional_directories: bool = False
    sandbox: str = "workspace-write"
    builtin_tools: bool = True
    providers: tuple[ProviderSpec, ...] = field(default_factory=tuple)

    def provider_spec(self, route: str) -> ProviderSpec | None:
        """The configured table for `route`, if any."""
        return next((p for p in self.providers if p.route == route), None)

    def to_json(self) -> dict[str, Any]:
        """Plain data for `--dump-config` (stable key order, paths as strings)."""
        data = asdict(self)
        data["home"] = str(self.home)
        return data


# ---------------------------------------------------------------------------------------
# Validation (pure)

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _check(value: Any, schema: dict[str, Any], where: str) -> None:
    kind = schema.get("type")
    if kind is not None:
        ok = isinstance(value, _TYPES[kind])
        if kind in ("integer", "number") and isinstance(value, bool):
            ok = False  # TOML true is not a number
        if not ok:
            raise ConfigError(f"{where}: expected {kind}, got {type(value).__name__}")
    if kind == "number" and not math.isfinite(value):
        raise ConfigError(f"{where}: must be a finite number")
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(str(c) for c in schema["enum"])
        raise ConfigError(f"{where}: {value!r} is not one of {choices}")
    if "minimum" in schema and value < schema["minimum"]:
        raise ConfigError(f"{where}: must be >= {schema['minimum']}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        raise ConfigError(f"{where}: must be > {schema['exclusiveMinimum']}")
    if "minLength" in schema and len(value) < schema["minLength"]:
        raise ConfigError(f"{where}: must not be empty")
    if kind == "array":
        for i, item in enumerate(value):
            _check(item, schema.get("items", {}), f"{where}[{i}]")
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                raise ConfigError(f"{where}: missing required key {key!r}")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            path = f"{where}.{key}" if where else key
            if key in props:
                _check(item, props[key], path)
            elif extra is False:
                raise ConfigError(f"{path}: unknown key")
            elif isinstance(extra, dict):
                _check(item, extra, path)


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
    _check(raw, SCHEMA, "")
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
        enable_session_load=raw.get("enable_session_load", False),
        enable_additional_directories=raw.get("enable_additional_directories", False),
        sandbox=raw.get("sandbox", "workspace-write"),
        builtin_tools=raw.get("builtin_tools", True),
        providers=providers,
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
