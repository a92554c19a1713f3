"""acp-plus as an installed tool, and the per-provider transport keys.

- the `acp-plus` console script (pyproject, installed metadata, a built wheel's
  entry_points.txt) and `--version`;
- `max_tokens`, `request_timeout`, `stream_idle_timeout`, `retries` per provider table:
  defaults, validation errors naming the key, and both providers honouring them;
- a failed HTTP exchange names the provider, the status and the provider's message, and a
  stalled stream fails after the idle timeout (the fake's `then: hang`).
"""

from __future__ import annotations

import asyncio
import configparser
import copy
import os
import shutil
import subprocess
import sys
import time
import tomllib
import zipfile
from importlib.metadata import distribution
from pathlib import Path
from typing import Any

import pytest
from plus_agent import REPO

from acp_plus.core.llm.base import ModelRequest
from acp_plus.core.llm.openai_chat import OpenAIChatConfig, OpenAIChatProvider
from acp_plus.core.llm.parity_stream import ParityStreamProvider
from acp_plus.settings.config import TRANSPORT_DEFAULTS, build
from acp_plus.settings.config_schema import ConfigError
from parity.fakellm.server import FakeLLM
from parity.scenario.model import DEFAULT_CATALOG

ENTRY = "acp_plus.__main__:main"
MODELS = tuple(DEFAULT_CATALOG["providers"][0]["models"])
HANG = [{"text": "partial", "deltas": 7, "then": "hang"}]


def _run(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acp_plus", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
        **kw,
    )


# -- 1. installable as a tool ----------------------------------------------------------


def test_pyproject_declares_the_console_script() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["acp-plus"] == ENTRY


def test_installed_metadata_has_the_entry_point() -> None:
    eps = distribution("acp-parity").entry_points
    (script,) = [ep for ep in eps if ep.group == "console_scripts" and ep.name == "acp-plus"]
    assert script.value == ENTRY
    assert script.load().__module__ == "acp_plus.__main__"


def test_version_flag_prints_the_package_version() -> None:
    result = _run("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"acp-plus {distribution('acp-parity').version}\n"
    assert result.stderr == ""


def _copy_source(dest: Path) -> None:
    """What a wheel build reads, copied so the build never writes into the work tree."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".mypy_cache")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, dest / name)
    for package in ("acp_plus", "parity"):
        shutil.copytree(REPO / package, dest / package, ignore=ignore)


def test_a_built_wheel_installs_the_acp_plus_command(tmp_path: Path) -> None:
    """What `pipx install .` / `uv tool install .` install: the wheel's console script.

    Built offline when the venv has a build backend (`--no-build-isolation`), else from the
    configured package index (the build requirements are on it); a build that fails both
    ways is a packaging failure, not a reason to skip.
    """
    src, out = tmp_path / "src", tmp_path / "wheels"
    src.mkdir()
    _copy_source(src)
    base = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(src), "-w", str(out)]
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    built = None
    for extra in (["--no-build-isolation"], []):
        built = subprocess.run(
            [*base, *extra], capture_output=True, text=True, timeout=300, env=env
        )
        if built.returncode == 0:
            break
    assert built is not None
    assert built.returncode == 0, f"the wheel does not build: {built.stderr.strip()[-600:]}"
    (wheel,) = out.glob("acp_parity-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (eps_name,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        eps = configparser.ConfigParser()
        eps.read_string(archive.read(eps_name).decode())
    assert eps["console_scripts"]["acp-plus"] == ENTRY
    assert "acp_plus/__main__.py" in names

    # Install it (no dependencies: the running venv has them) and run the script.
    target = tmp_path / "target"
    pip_install = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target"]
    subprocess.run(
        [*pip_install, str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=120,
        env=env,
    )
    script = target / "bin" / "acp-plus"
    assert script.exists()
    ran = subprocess.run(
        [str(script), "--version"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**env, "PYTHONPATH": str(target)},
        stdin=subprocess.DEVNULL,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "acp-plus 0.1.0\n"


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        (("pipx", "uv"), ["pipx install --force ."]),
        (("uv",), ["uv tool install --force ."]),
        (
            (),
            [
                "python -m pip install --user .",
                "python -m pip install --user --force-reinstall --no-deps .",
            ],
        ),
    ],
)
def test_make_install_uses_pipx_else_uv_else_pip_user(
    tmp_path: Path, tools: tuple[str, ...], expected: list[str]
) -> None:
    """`make install` works without pipx: each tool found first is the one called (fake
    tools on a PATH holding nothing else of the kind record their arguments)."""
    log = tmp_path / "calls.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in (*tools, "python"):
        fake = bin_dir / name
        fake.write_text(f'#!/bin/sh\necho "{name} $*" >> {log}\n')
        fake.chmod(0o755)
    path = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    if any(shutil.which(t, path="/usr/bin:/bin") for t in ("pipx", "uv")):
        pytest.skip("pipx or uv installed system-wide: the fallback order cannot be seen")
    done = subprocess.run(
        ["make", "-s", "-C", str(REPO), "install", f"PY={bin_dir / 'python'}"],
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == expected


# -- 2. the transport keys: defaults and validation ------------------------------------

CHAT = {
    "api": "openai-chat",
    "base_url": "http://127.0.0.1:9/v1",
    "api_key_env": "K",
    "models": [{"id": "m"}],
}
STREAM = {"api": "parity-stream", "base_url": "http://127.0.0.1:9/runs/r"}


def _spec(table: dict[str, Any]) -> Any:
    return build({"providers": {"p": table}}, Path("/h")).providers[0]


def test_defaults_are_the_former_hard_coded_values() -> None:
    chat, stream = _spec(CHAT), _spec(STREAM)
    assert (chat.max_tokens, chat.request_timeout, chat.stream_idle_timeout, chat.retries) == (
        None,
        600.0,
        600.0,
        2,
    )
    assert (stream.request_timeout, stream.stream_idle_timeout, stream.retries) == (None, None, 0)
    # One source of truth: the openai-chat defaults are the provider's own.
    base = OpenAIChatConfig()
    assert TRANSPORT_DEFAULTS["openai-chat"] == {
        "max_tokens": base.max_tokens,
        "request_timeout": base.timeout,
        "stream_idle_timeout": base.stream_idle_timeout,
        "retries": base.max_retries,
    }
    # The built-in deepseek route gets them too.
    (deepseek,) = build({}, Path("/h")).providers
    assert (deepseek.request_timeout, deepseek.retries) == (600.0, 2)


def test_values_are_taken_and_dumped() -> None:
    spec = _spec(
        {**CHAT, "max_tokens": 256, "request_timeout": 30, "stream_idle_timeout": 2.5, "retries": 0}
    )
    assert (spec.max_tokens, spec.request_timeout, spec.stream_idle_timeout, spec.retries) == (
        256,
        30.0,
        2.5,
        0,
    )
    assert isinstance(spec.request_timeout, float)
    stream = _spec({**STREAM, "request_timeout": 5, "stream_idle_timeout": 1, "retries": 3})
    assert (stream.request_timeout, stream.stream_idle_timeout, stream.retries) == (5.0, 1.0, 3)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({**CHAT, "retries": -1}, "providers.p.retries: must be >= 0"),
        ({**CHAT, "retries": 1.5}, "providers.p.retries: expected integer, got float"),
        ({**CHAT, "retries": True}, "providers.p.retries: expected integer, got bool"),
        ({**CHAT, "max_tokens": 0}, "providers.p.max_tokens: must be >= 1"),
        ({**CHAT, "max_tokens": "9"}, "providers.p.max_tokens: expected integer, got str"),
        ({**CHAT, "request_timeout": 0}, "providers.p.request_timeout: must be > 0"),
        ({**CHAT, "request_timeout": -3.0}, "providers.p.request_timeout: must be > 0"),
        ({**CHAT, "request_timeout": "30s"}, "providers.p.request_timeout: expected number"),
        ({**CHAT, "stream_idle_timeout": False}, "providers.p.stream_idle_timeout: expected"),
        (
            {**CHAT, "stream_idle_timeout": float("nan")},
            "providers.p.stream_idle_timeout: must be a finite number",
        ),
        (
            {**CHAT, "request_timeout": float("inf")},
            "providers.p.request_timeout: must be a finite number",
        ),
        ({**STREAM, "max_tokens": 10}, "providers.p.max_tokens: parity-stream/1 requests"),
        ({**CHAT, "timeout": 3}, "providers.p.timeout: unknown key"),
    ],
)
def test_invalid_values_name_the_key(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _spec(table)
    assert str(caught.value).startswith(message), str(caught.value)


def test_cli_reports_a_bad_key_and_dumps_good_ones(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[providers.p]\napi = 'parity-stream'\nbase_url = 'http://x'\nretries = -2\n")
    result = _run("--config", str(bad), "--home", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr == f"acp-plus: config error: {bad}: providers.p.retries: must be >= 0\n"
    good = tmp_path / "good.toml"
    good.write_text(
        "[providers.p]\napi = 'parity-stream'\nbase_url = 'http://x'\nstream_idle_timeout = 4\n"
    )
    result = _run("--config", str(good), "--home", str(tmp_path), "--dump-config")
    assert result.returncode == 0, result.stderr
    assert '"stream_idle_timeout": 4.0' in result.stdout
    schema = _run("--dump-config-schema").stdout
    for key in ("max_tokens", "request_timeout", "stream_idle_timeout", "retries"):
        assert f'"{key}"' in schema


# -- 2/3. the providers honour them ----------------------------------------------------


def _req() -> ModelRequest:
    return ModelRequest(
        provider="mock",
        model="mock",
        messages=[{"role": "user", "content": [{"type": "text", "text": "go"}]}],
    )


def _chat(base_url: str, **kw: Any) -> OpenAIChatProvider:
    config = OpenAIChatConfig(
        id="mock", name="Mock", base_url=base_url, api_key_env="K", models=MODELS, **kw
    )
    return OpenAIChatProvider(config, environ={"K": "sk-fake"})


async def _collect(provider: Any) -> list[dict[str, Any]]:
    try:
        return [chunk async for chunk in provider.stream(_req())]
    finally:
        await provider.aclose()


def _failure(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    last = chunks[-1]
    assert last["type"] == "finish" and last["reason"]["kind"] == "error", last
    failure: dict[str, Any] = last["reason"]["failure"]
    return failure


def _model_calls(run: Any) -> int:
    return len([r for r in run.requests if r.path in ("/stream", "/v1/chat/completions")])


def _open(fake: FakeLLM, name: str, llm: list[dict[str, Any]]) -> Any:
    return fake.open_run(name, llm=copy.deepcopy(llm), tools=[], catalog=DEFAULT_CATALOG)


async def test_script_exhausted_is_the_servers_error_text_never_retried(fake: FakeLLM) -> None:
    run = _open(fake, "ps", [])
    failure = _failure(await _collect(ParityStreamProvider(run.base_url, retries=3)))
    assert failure == {
        "message": "script exhausted",
        "code": "PARITY_PROTOCOL",
    }
    assert _model_calls(run) == 1  # a protocol failure is never retried, whatever `retries`

    run = _open(fake, "chat", [])
    failure = _failure(await _collect(_chat(f"{run.base_url}/v1", max_retries=0)))
    # The fake's error body carries its text as the OpenAI API does (`error.message`):
    # the same message as through parity-stream (docs/contract.md 7.1).
    assert failure == {"message": "script exhausted", "code": "BAD_REQUEST"}
    assert _model_calls(run) == 1


async def test_openai_chat_retries_is_the_sdks_retry_count(fake: FakeLLM) -> None:
    # The default (2): three calls. The harness's plus-openai sets `retries = 0`.
    run = _open(fake, "chat", [])
    provider = _chat(f"{run.base_url}/v1")
    assert provider.config.max_retries == 2
    _failure(await _collect(provider))
    assert _model_calls(run) == 3


async def test_openai_chat_sends_max_tokens_only_when_set(fake: FakeLLM) -> None:
    text = [{"text": "hi"}]
    run = _open(fake, "set", text)
    await _collect(_chat(f"{run.base_url}/v1", max_tokens=64, max_retries=0))
    run_unset = _open(fake, "unset", text)
    await _collect(_chat(f"{run_unset.base_url}/v1", max_retries=0))
    (sent,) = [r.body for r in run.requests if r.path == "/v1/chat/completions"]
    (unset,) = [r.body for r in run_unset.requests if r.path == "/v1/chat/completions"]
    assert sent["max_tokens"] == 64
    assert "max_tokens" not in unset


async def _stalls(provider: Any, run: Any, api: str) -> None:
    started = time.monotonic()
    chunks = await asyncio.wait_for(_collect(provider), 10)
    elapsed = time.monotonic() - started
    assert [c["type"] for c in chunks[:2]] == ["block-start", "text-delta"]
    assert _failure(chunks) == {
        "message": f"provider mock ({api}): stream stalled: no data for 0.3 s "
        "(stream_idle_timeout)",
        "code": "TIMEOUT",
    }
    assert 0.3 <= elapsed < 5
    # The response was closed: the fake saw the request aborted.
    calls = [r for r in run.requests if r.path in ("/stream", "/v1/chat/completions")]
    for _ in range(200):
        if calls[0].aborted:
            break
        await asyncio.sleep(0.01)
    assert calls[0].aborted


async def test_a_hanging_parity_stream_fails_after_the_idle_timeout(fake: FakeLLM) -> None:
    run = _open(fake, "hang", HANG)
    await _stalls(ParityStreamProvider(run.base_url, stream_idle_timeout=0.3), run, "parity-stream")


async def test_a_hanging_chat_stream_fails_after_the_idle_timeout(fake: FakeLLM) -> None:
    run = _open(fake, "hang", HANG)
    provider = _chat(f"{run.base_url}/v1", stream_idle_timeout=0.3, max_retries=0)
    await _stalls(provider, run, "openai-chat")


async def test_slow_consumer_does_not_trip_the_idle_timeout(fake: FakeLLM) -> None:
    """Only the wait for the provider counts, not the consumer's time between chunks."""
    run = _open(fake, "slow", [{"text": "abc", "deltas": 3}])
    provider = ParityStreamProvider(run.base_url, stream_idle_timeout=0.2)
    seen = []
    try:
        async for chunk in provider.stream(_req()):
            seen.append(chunk)
            await asyncio.sleep(0.3)
    finally:
        await provider.aclose()
    assert seen[-1] == {"type": "finish", "reason": {"kind": "stop"}}


class _Silent:
    """A TCP server that accepts, counts, and never answers (or closes at once)."""

    def __init__(self, close: bool) -> None:
        self.close = close
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self.close:
            writer.close()
        else:
            self._writers.append(writer)

    async def stop(self) -> None:
        for writer in self._writers:
            writer.close()
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()


async def test_parity_stream_request_timeout_and_transport_retries() -> None:
    silent = _Silent(close=False)
    url = await silent.start()
    try:
        provider = ParityStreamProvider(url, request_timeout=0.2, retries=1)
        failure = _failure(await asyncio.wait_for(_collect(provider), 10))
    finally:
        await silent.stop()
    assert failure == {
        "message": "provider mock (parity-stream): no answer within 0.2 s (request_timeout)",
        "code": "TIMEOUT",
    }
    assert silent.connections == 2  # one retry

    dropping = _Silent(close=True)
    url = await dropping.start()
    try:
        failure = _failure(await _collect(ParityStreamProvider(url, retries=2)))
    finally:
        await dropping.stop()
    assert failure["code"] == "TRANSPORT"
    assert failure["message"].startswith("provider mock (parity-stream): transport failed: ")
    assert dropping.connections == 3


async def test_build_runtime_passes_the_config_to_both_providers(
    fake: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acp_plus.live.runtime import build_runtime

    # build_runtime protects the key variable from tool environments process-wide, so it
    # gets a name of its own (the fake ignores the key).
    monkeypatch.setenv("INSTALL_CONFIG_TEST_KEY", "sk-fake")
    stream_run = _open(fake, "ps", HANG)
    chat_run = _open(fake, "chat", HANG)
    config = build(
        {
            "providers": {
                "fixture": {**STREAM, "base_url": stream_run.base_url, "stream_idle_timeout": 0.3},
                "mock2": {
                    **CHAT,
                    "base_url": f"{chat_run.base_url}/v1",
                    "api_key_env": "INSTALL_CONFIG_TEST_KEY",
                    "models": [{"id": "mock"}],
                    "stream_idle_timeout": 0.3,
                    "retries": 0,
                    "max_tokens": 7,
                },
            }
        },
        tmp_path,
    )
    runtime = await build_runtime(config)
    try:
        chunks = [c async for c in runtime.router.stream(_req())]
        assert _failure(chunks)["message"].startswith("provider mock (parity-stream): stream stall")
        req = _req()
        req.provider = "mock2"
        chunks = [c async for c in runtime.router.stream(req)]
        assert _failure(chunks)["message"].startswith("provider mock2 (openai-chat): stream stall")
    finally:
        await runtime.router.aclose()
    (body,) = [r.body for r in chat_run.requests if r.path == "/v1/chat/completions"]
    assert body["max_tokens"] == 7
