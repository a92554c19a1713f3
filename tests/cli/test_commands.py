"""The `parity` command's subcommands other than run/record (those: test_plugin.py)."""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from pathlib import Path

import pexpect
import yaml

from tests.support.project import GHOST, Project, child_env, mini_target

NATIVE = "PARITY_DSH=off: this target does not run here (its recordings stand in)"


def test_targets_lists_every_target_and_why(project: Project) -> None:
    done = project.parity("targets")
    assert done.returncode == 0
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    assert re.fullmatch(r"mini\s+available\s+peer, parity-stream, tools via stream", rows["mini"])
    assert rows["ghost"].split(None, 2)[1:] == ["unavailable", "ghost-agent is not installed here"]
    assert rows["native"].endswith(NATIVE)
    assert rows["codex-acp"].endswith("not installed: run parity peers install")
    assert f"{project.root / 'parity.toml'}" in done.stdout


def test_show_prints_the_view_and_two_targets_side_by_side(project: Project) -> None:
    one = project.parity("show", "demo/text", "mini")
    assert one.returncode == 0, one.stderr
    assert one.stdout.startswith("# demo/text on mini\nsteps:\n")
    assert "text: hello there" in one.stdout
    two = project.parity("show", "demo/text", "mini", "mini-b", "--width", "40")
    lines = two.stdout.splitlines()
    assert lines[0].split() == ["mini", "mini-b"]
    assert all(" | " not in line for line in lines[2:])  # same agent: no changed rows
    raw = project.parity("show", "demo/text", "mini", "--raw")
    assert '-> {"jsonrpc":"2.0","id":0,"method":"initialize"' in raw.stdout
    assert "mini: stderr tail" in raw.stdout


def test_show_and_diff_fall_back_to_a_recorded_snapshot(project: Project) -> None:
    missing = project.parity("show", "demo/text", "ghost")
    assert missing.returncode == 1
    assert "ghost cannot run (ghost-agent is not installed here) and has no snapshot" in (
        missing.stderr
    )
    project.write(
        "scenarios/demo/text.yaml",
        project.root.joinpath("scenarios/demo/text.yaml")
        .read_text()
        .replace("[mini, mini-b]", "[mini, ghost]"),
    )
    assert project.parity("record").returncode == 0
    recorded = project.snapshot("demo/text", "mini").read_text()
    project.snapshot("demo/text", "ghost").write_text(recorded.replace("hello there", "hi"))
    diff = project.parity("diff", "demo/text")
    assert diff.returncode == 1
    assert "note: ghost (recorded; ghost-agent is not installed here)" in diff.stdout
    assert "demo/text: ghost vs mini (reference)" in diff.stdout  # the report names it
    assert '- mini: "hello there"' in diff.stdout and '+ ghost: "hi"' in diff.stdout
    same = project.parity("diff", "demo/text", "mini", "mini-b")
    assert same.returncode == 0 and "0 difference(s)" in same.stdout


def test_calibrate_finds_the_nondeterministic_field(project: Project) -> None:
    project.write("parity.toml", mini_target("mini", extra_env='MINI_NOISE = "1"') + GHOST)
    done = project.parity("calibrate", "demo/text", "mini", "--runs", "3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "# mini: 1 field(s) differed across 3 runs",
        "masks:",
        '  - path: "steps[0].result._meta.nonce"',
        "    reason: nondeterministic in mini (parity calibrate, 3 runs)",
        "    targets: [mini]",
    ]
    quiet = project.parity("calibrate", "demo/text", "ghost")
    assert quiet.returncode == 1 and "ghost cannot run" in quiet.stderr


def test_calibrate_never_proposes_masking_an_exit(project: Project) -> None:
    """The agent exits with another status at each teardown: calibrate names the field,
    proposes no mask for it, and fails (runs that end differently are not noise)."""
    noisy = 'MINI_NOISE = "1", MINI_EXIT_NOISE = "1"'
    project.write("parity.toml", mini_target("mini", extra_env=noisy))
    done = project.parity("calibrate", "demo/text", "mini", "--runs", "3")
    assert done.returncode == 1, done.stderr
    masks = yaml.safe_load(done.stdout)["masks"]
    assert [m["path"] for m in masks] == ["steps[0].result._meta.nonce"]
    assert "not proposed: 1 field(s) showing an exit, teardown or run problem" in done.stdout
    assert "#   process.exit[0].code" in done.stdout.splitlines()


def test_validate_reports_file_line_errors(project: Project) -> None:
    project.write("scenarios/demo/bad.yaml", "description: x\nsteps:\n  - promt: {}\n")
    done = project.parity("validate", "scenarios/demo/bad.yaml")
    assert done.returncode == 2
    assert re.search(r"scenarios/demo/bad\.yaml:3:\d+: ", done.stdout)


def test_peers_install_runs_the_pinned_npm_install(project: Project, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "npm.log"
    # A stand-in `npm` (a real executable on PATH): records its argv and creates the
    # binary a real install would, so availability flips from "not installed" to ok.
    npm = bin_dir / "npm"
    npm.write_text(
        f"#!{sys.executable}\n"
        "import os, sys, pathlib\n"
        f"open({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "prefix = pathlib.Path(sys.argv[sys.argv.index('--prefix') + 1])\n"
        "exe = prefix / 'node_modules/.bin/qwen'\n"
        "exe.parent.mkdir(parents=True, exist_ok=True); exe.write_text('')\n"
    )
    npm.chmod(0o755)
    env_path = f"{bin_dir}:/usr/bin:/bin"
    done = project.parity("peers", "install", "qwen-code", PATH=env_path)
    assert done.returncode == 0, done.stdout + done.stderr
    prefix = project.root / ".cache/peers/qwen-code"
    assert log.read_text().split() == [
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--loglevel=error",
        "@qwen-code/qwen-code@0.15.10",
    ]
    assert "qwen-code: installed" in done.stdout
    again = project.parity("peers", "install", "qwen-code", PATH=env_path)
    assert "qwen-code: already installed" in again.stdout
    listing = project.parity("peers", "list", PATH=env_path)
    assert re.search(r"qwen-code\s+@qwen-code/qwen-code@0.15.10\s+installed", listing.stdout)
    assert re.search(r"opencode\s+opencode-ai@1.18.33\s+not installed", listing.stdout)
    unknown = project.parity("peers", "install", "plus", PATH=env_path)
    assert unknown.returncode == 1 and "not installable: plus" in unknown.stdout
    no_npm = project.parity("peers", "install", "opencode", PATH="/nonexistent")
    assert no_npm.returncode == 1 and "npm not found on PATH" in no_npm.stdout


def test_fake_llm_serves_a_scenario_until_interrupted(project: Project) -> None:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "parity.cli", "fake-llm", "--scenario", "demo/text"],
        cwd=str(project.root),
        env=child_env(),
        encoding="utf-8",
        timeout=20,
    )
    try:
        child.expect(r"parity-stream/1\s+(http://127\.0\.0\.1:\d+/\S+)")
        base = child.match.group(1)
        with urllib.request.urlopen(f"{base}/catalog", timeout=5) as reply:
            catalog = json.load(reply)
        assert catalog["protocol"] == "parity-stream/1"
        child.sendintr()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_the_readme_five_minute_section_runs_on_every_core() -> None:
    # `parity run` is serial; `make parity` runs `-n auto`. The quick start uses the
    # faster one, as `make parity` does, and points other repositories at their page.
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## A first scenario in five minutes", 1)[1].split("\n## ", 1)[0]
    runs = re.findall(r"^\.venv/bin/parity run\b.*$", section, flags=re.M)
    assert runs and all(" -n auto" in line for line in runs), runs
    assert "docs/own-agent.md" in readme
