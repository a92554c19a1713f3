"""The `acp-plus` command line: help, dumps and configuration errors never start the protocol."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from plus_agent import REPO


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m acp_plus` with stdin left open: a CLI path must not read it."""
    return subprocess.run(
        [sys.executable, "-m", "acp_plus", *args],
        stdin=subprocess.PIPE,
        capture_output=True,
        text=True,
        timeout=20,
        cwd=REPO,
        env=env,
    )


def test_help_prints_usage_and_exits() -> None:
    result = run("--help")
    assert result.returncode == 0
    assert result.stdout.startswith("usage: acp-plus")
    assert "--config FILE" in result.stdout and "--dump-config-schema" in result.stdout


def test_dump_config_shows_defaults_and_home(tmp_path: Path) -> None:
    result = run("--home", str(tmp_path), "--dump-config")
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    assert config["home"] == str(tmp_path)
    assert (config["provider"], config["model"]) == ("deepseek", "deepseek-v4-flash")
    assert config["providers"][0]["base_url"] == "https://api.deepseek.com"


def test_home_defaults_to_the_environment(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "ACP_PLUS_HOME": str(tmp_path / "h")}
    result = run("--dump-config", env=env)
    assert json.loads(result.stdout)["home"] == str(tmp_path / "h")


def test_dump_config_schema_is_json_schema() -> None:
    result = run("--dump-config-schema")
    schema = json.loads(result.stdout)
    assert schema["type"] == "object"
    assert "session_list_page_size" in schema["properties"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sandbox = 'nope'", "sandbox: 'nope' is not one of"),
        ("[broken", "invalid TOML"),
        ("session_list_page_size = 0", "session_list_page_size: must be >= 1"),
    ],
)
def test_bad_config_is_one_line_and_exit_2(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text, encoding="utf-8")
    result = run("--config", str(config))
    assert result.returncode == 2
    assert result.stdout == ""  # stdout is for protocol frames only
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"acp-plus: config error: {config}: ")
    assert message in lines[0]


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "acp-plus"
    assert script.exists()
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=20)
    assert result.returncode == 0 and "usage: acp-plus" in result.stdout


def test_dump_config_into_a_closed_pipe_is_not_a_traceback(tmp_path: Path) -> None:
    # `acp-plus --dump-config | head -1`: the reader goes away before the dump is written.
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_plus", "--dump-config", "--home", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert b"Traceback" not in err
