"""Agents get an allow-listed environment: twenty credentials exported in the harness's
own environment reach no file of a run, even with an agent that prints all it has."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from parity.driver import run as run_module
from parity.driver.process import agent_env, allowed_env
from parity.driver.run import run_scenario
from parity.view.normalize import view
from tests.support.driver import BASIC, FAST, agent, assert_all_gone, scenario, st
from tests.support.secrets import SECRET_NAMES, files_under, markers_in, secret_env


def test_only_the_allow_list_is_inherited(tmp_path: Path) -> None:
    base = {
        "PATH": "/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "LC_PARITY_SECRET": "planted",  # named like a locale category, but none (issue 33)
        "TZ": "UTC",
        "HOME": "/root",
        "XDG_CONFIG_HOME": "/x",
        "PYTHONPATH": "/src",
        **secret_env(),
    }
    assert allowed_env(base) == {k: base[k] for k in ("PATH", "LANG", "LC_ALL", "TZ")}
    env = agent_env(base, tmp_path / "home", tmp_path / "tmp", {"OPENAI_API_KEY": "sk-fake"})
    assert env["OPENAI_API_KEY"] == "sk-fake"  # a target may set what is not inherited
    assert env["HOME"] == str(tmp_path / "home")
    assert env["XDG_CONFIG_HOME"] == str(tmp_path / "home" / ".config")
    assert env["TMPDIR"] == str(tmp_path / "tmp")
    assert "PYTHONPATH" not in env and not set(SECRET_NAMES) - {"OPENAI_API_KEY"} & set(env)


async def test_exported_credentials_reach_no_file_of_the_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    secrets = secret_env()
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    own = "target-own-variable-7f3a"
    transcript = await run_scenario(
        scenario([*BASIC, st("prompt", session="s1", text="env")], expect_files=["env.txt"]),
        agent("prints_environment", {"OWN_MARKER": own}),
        llm_run=None,
        run_id="env-leak",
        target="prints_environment",
        ladder=FAST,
        keep_dir=True,
    )
    assert_all_gone(transcript)
    root = Path(transcript.paths["workdir"]).parent
    try:
        dumps = tmp_path / "dumps"
        dumps.mkdir()
        (dumps / "transcript.json").write_text(
            json.dumps(dataclasses.asdict(transcript), default=str)
        )
        (dumps / "view.json").write_text(json.dumps(view(transcript, "exact", [])))
        files = [*files_under(root), *files_under(dumps)]
        # The agent did print what it got: the target's own variable is everywhere.
        assert {Path(f).name for f, _ in markers_in(files, [own])} >= {
            "env.txt",
            "transcript.json",
            "view.json",
        }
        assert own in transcript.processes[0].stderr_tail
        assert markers_in(files, secrets.values()) == []
    finally:
        run_module._remove_later(root)
        run_module.wait_for_cleanup()


async def test_home_files_are_written_into_the_agents_home_before_it_starts() -> None:
    transcript = await run_scenario(
        scenario(
            BASIC,
            home_files={".agents/skills/a.md": "skill\n", "acp-plus.toml": "scenario's\n"},
            files={"w.txt": "w"},
        ),
        agent("echo_agent", files={"acp-plus.toml": "target's own\n"}),
        llm_run=None,
        run_id="home-files",
        target="echo_agent",
        ladder=FAST,
        keep_dir=True,
    )
    assert_all_gone(transcript)
    root = Path(transcript.paths["workdir"]).parent
    try:
        home = Path(transcript.paths["home"])
        assert (home / ".agents/skills/a.md").read_text() == "skill\n"
        assert (home / "acp-plus.toml").read_text() == "target's own\n"
        assert not (Path(transcript.paths["workdir"]) / ".agents").exists()
    finally:
        run_module._remove_later(root)
        run_module.wait_for_cleanup()
