"""`validate_main`, the body of `parity validate`: exit codes and output, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parity.cli.validate import validate_main, validate_paths
from parity.config.project import load_config

ROOT = Path(__file__).resolve().parents[2]
GOOD = "description: fine\nsteps: [{initialize: {}}]\n"
BAD = "description: broken\nsteps:\n  - promt: {}\n  - wait: {ms: soon}\n"


def run(*paths: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys; from parity.config.project import load_config; "
        "from parity.cli.validate import validate_main as v; "
        "sys.exit(v(sys.argv[1:], load_config()))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *paths], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_errors_exit_2_with_every_finding_and_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    garbage = tmp_path / "bin.yaml"
    garbage.write_bytes(b"\xff\xfe\x00 not utf-8")
    done = run(str(bad), str(garbage), str(tmp_path / "missing.yaml"))
    assert done.returncode == 2
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        f"{bad}:3:5: steps[0]: unknown key 'promt' (did you mean 'prompt'?)",
        f"{bad}:4:16: steps[1].wait.ms: expected an integer, got string 'soon'",
        f"{garbage}: (top level): cannot read: 'utf-8' codec can't decode byte 0xff in position 0: "
        "invalid start byte",
        f"{tmp_path}/missing.yaml: (top level): no such file or directory",
        "checked 3 file(s): 4 error(s), 0 warning(s)",
    ]


def test_clean_files_exit_0(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    done = run(str(tmp_path))
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "checked 1 file(s): 0 error(s), 0 warning(s)\n",
        "",
    )


def test_warnings_alone_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "description: d\nllm: [{tool_calls: [{id: c, name: read}]}]\nsteps: [{initialize: {}}]\n"
    )
    assert validate_main([str(path)], load_config(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "warning: tool 'read' is not declared" in out
    assert out.endswith("0 error(s), 1 warning(s)\n")


def test_without_paths_checks_the_project_scenarios(tmp_path: Path) -> None:
    done = run()
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("checked ") and " 0 error(s), 0 warning(s)" in done.stdout
    empty = run(cwd=tmp_path)
    assert (empty.returncode, empty.stdout) == (
        2,
        "parity validate: no scenario files found below ./scenarios\n",
    )


def test_without_paths_the_configured_scenarios_directory_is_checked(tmp_path: Path) -> None:
    (tmp_path / "parity.toml").write_text('scenarios = "cases"\n')
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "bad.yaml").write_text(BAD)
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "good.yaml").write_text(GOOD)
    done = run(cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout.splitlines()[0].startswith(f"{tmp_path}/cases/bad.yaml:3:5: ")
    assert done.stdout.splitlines()[-1] == "checked 1 file(s): 2 error(s), 0 warning(s)"
    (tmp_path / "cases" / "bad.yaml").unlink()
    empty = run(cwd=tmp_path)
    assert (empty.returncode, empty.stdout) == (
        2,
        "parity validate: no scenario files found below ./cases\n",
    )


def test_parity_validate_command_uses_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    command = Path(sys.executable).with_name("parity")
    done = subprocess.run(
        [str(command), "validate", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == (
        f"{bad}:3:5: steps[0]: unknown key 'promt' (did you mean 'prompt'?)"
    )


def test_targets_are_checked_against_the_project_registry(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.parity.targets.mine]\nfamily = 'peer'\ndialect = 'openai-chat'\n"
        "fixture_tools = 'mcp'\ncommand = ['true']\n"
    )
    path = tmp_path / "t.yaml"
    path.write_text("description: d\ntargets: [native, plux, mine]\nsteps: [{initialize: {}}]\n")
    assert [str(f) for f in validate_paths([path])] == [
        f"{path}:2:19: targets[1]: unknown target 'plux' (did you mean 'plus'?)"
    ]


def test_a_broken_registry_is_a_warning_and_the_rest_is_still_checked(tmp_path: Path) -> None:
    (tmp_path / "parity.toml").write_text("targets = 5\n")
    path = tmp_path / "t.yaml"
    path.write_text("description: d\ntargets: [plux]\nsteps: [{promt: {}}]\n")
    found = validate_paths([path])
    assert [(f.severity, f.key) for f in found] == [("warning", "targets"), ("error", "steps[0]")]
    assert found[0].message.startswith("cannot read the target registry: ")
