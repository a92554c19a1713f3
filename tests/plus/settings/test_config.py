"""acp-plus configuration: validation messages, defaults and the schema they share."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from acp_plus.settings.config import build, default_home, load_file
from acp_plus.settings.config_schema import SCHEMA, ConfigError

HOME = Path("/h")
OPENAI = {"api": "openai-chat", "base_url": "http://127.0.0.1:1/v1", "api_key_env": "K"}


def test_defaults_give_the_deepseek_route() -> None:
    config = build({}, HOME)
    assert (config.provider, config.model) == ("deepseek", "deepseek-v4-flash")
    spec = config.provider_spec("deepseek")
    assert spec is not None and spec.api == "openai-chat"
    assert spec.base_url == "https://api.deepseek.com"
    assert spec.api_key_env == "DEEPSEEK_API_KEY"
    assert config.session_list_page_size == 100
    # The shipped default turns the increments on (docs/acp-plus.md, "Profiles").
    assert config.profile == "plus" and config.increments
    assert (config.enable_session_load, config.enable_additional_directories) == (True, True)
    assert (config.sandbox, config.builtin_tools) == (
        "workspace-write",
        ("bash", "fs", "fs-search", "jobs", "todo", "skill", "goal", "workflow", "subagent"),
    )


def test_explicit_providers_replace_the_default_route() -> None:
    raw = tomllib.loads(
        """
        provider = "mock"
        model = "mock"
        [providers.fixture]
        api = "parity-stream"
        base_url = "http://127.0.0.1:9/runs/r1"
        """
    )
    config = build(raw, HOME)
    assert [p.route for p in config.providers] == ["fixture"]
    # A catalog provider's routes are only known at run time, so mock/mock is accepted.
    assert (config.provider, config.model) == ("mock", "mock")


def test_models_with_reasoning() -> None:
    raw = tomllib.loads(
        """
        provider = "r"
        model = "m"
        [[providers.r.models]]
        id = "m"
        context_window = 1024
        input_modalities = ["text", "image"]
        reasoning_efforts = [{id = "low", name = "Low"}, {id = "high"}]
        default_effort = "high"
        [providers.r]
        api = "openai-chat"
        base_url = "http://127.0.0.1:1/v1"
        api_key_env = "LOCAL_KEY"
        """
    )
    model = build(raw, HOME).providers[0].models[0]
    assert model.name == "m"
    assert [(e.id, e.name) for e in model.reasoning_efforts] == [("low", "Low"), ("high", "high")]
    assert model.default_effort == "high"
    assert model.input_modalities == ("text", "image")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"session_list_page_size": 0}, "session_list_page_size: must be >= 1"),
        ({"session_list_page_size": True}, "session_list_page_size: expected integer, got bool"),
        ({"sandbox": "yolo"}, "sandbox: 'yolo' is not one of read-only"),
        ({"colour": 1}, "colour: unknown key"),
        ({"provider": "deepseek"}, "provider and model must be set together"),
        ({"provider": "x", "model": "y"}, "provider: 'x' is not a configured route"),
        (
            {"provider": "deepseek", "model": "nope"},
            "model: 'nope' is not a model of provider 'deepseek'",
        ),
        ({"providers": {"p": {"api": "grpc"}}}, "providers.p.api: 'grpc' is not one of"),
        ({"providers": {"p": {"api": "parity-stream"}}}, "needs base_url"),
        (
            {"providers": {"p": {"api": "openai-chat", "base_url": "u"}}},
            "p: an openai-chat provider needs api_key_env",
        ),
        (
            {"providers": {"p": {**OPENAI}}},
            "p.models: an openai-chat provider needs at least one model",
        ),
        (
            {"providers": {"p": {**OPENAI, "models": [{"id": "a", "x": 1}]}}},
            "providers.p.models[0].x: unknown key",
        ),
        (
            {"providers": {"p": {**OPENAI, "models": [{"id": "a", "default_effort": "hi"}]}}},
            "providers.p.models[0].default_effort: 'hi' is not a declared effort",
        ),
    ],
)
def test_bad_config_names_the_key(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        build(raw, HOME)
    assert message in str(info.value)


def test_load_file_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "c.toml"
    bad.write_text("sandbox = [", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{bad}: invalid TOML"):
        load_file(bad, HOME)
    with pytest.raises(ConfigError, match="cannot read"):
        load_file(tmp_path / "missing.toml", HOME)


def test_home_resolution() -> None:
    assert default_home({"ACP_PLUS_HOME": "/x"}) == Path("/x")
    assert default_home({"XDG_DATA_HOME": "/d"}) == Path("/d/acp-plus")
    assert default_home({}) == Path.home() / ".local/share/acp-plus"


def test_schema_lists_every_config_field() -> None:
    from dataclasses import fields

    from acp_plus.settings.config import Config

    names = {f.name for f in fields(Config)} - {"home"}
    assert names == set(SCHEMA["properties"])


def test_hooks_are_an_opt_in() -> None:
    # Native 0.2.1-rc.2 mounts no hooks: the baseline runs none (docs/acp-plus.md, "Hooks").
    assert build({}, HOME).hooks is False
    assert build({"hooks": True}, HOME).hooks is True
    assert SCHEMA["properties"]["hooks"]["default"] is False
    with pytest.raises(ConfigError, match="hooks"):
        build({"hooks": "rc8"}, HOME)


@pytest.mark.parametrize(
    ("value", "families"),
    [
        (
            True,
            ("bash", "fs", "fs-search", "jobs", "todo", "skill", "goal", "workflow", "subagent"),
        ),
        (False, ()),
        (["fs", "web", "fs"], ("fs", "web")),
        (["ralph"], ("ralph",)),
        ([], ()),
    ],
)
def test_builtin_tools_is_a_switch_or_a_list_of_families(
    value: bool | list[str], families: tuple[str, ...]
) -> None:
    """true: every family acp-plus offers by default (native 0.2.1-rc.2's: not ralph); a
    list: native's family names, a family acp-plus lacks included (it then offers nothing
    for it, and says so)."""
    assert build({"builtin_tools": value}, HOME).builtin_tools == families


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (["bash", "files"], r"^builtin_tools\[1\]: 'files' is not one of bash, fs, fs-search,"),
        ("fs", r"^builtin_tools: expected boolean or array, got str$"),
        ([1], r"^builtin_tools\[0\]: expected string, got int$"),
    ],
)
def test_builtin_tools_refuses_an_unknown_family_by_name(value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build({"builtin_tools": value}, HOME)
