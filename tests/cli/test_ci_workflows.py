"""The documented CI workflows (docs/ci/): their jobs and artifact flow, and their own
`parity` commands run as the CI systems would run them, shards as separate processes,
then the merge, on a small project of the mini agent.

GitHub Actions is also linted with actionlint, its `run:` scripts with shellcheck (both
dev dependencies); GitLab CI has no offline linter, so its structure checks stand alone.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.project import TEXT_SCENARIO, Project, child_env, mini_target

REPO = Path(__file__).resolve().parents[2]
GITHUB = REPO / "docs" / "ci" / "github-actions.yml"
GITLAB = REPO / "docs" / "ci" / "gitlab-ci.yml"


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def runs(job: dict[str, Any]) -> list[str]:
    return [s["run"] for s in job["steps"] if "run" in s]


def step(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in job["steps"] if str(s.get("uses", "")).startswith(action)]


def test_github_shards_upload_what_the_merge_downloads_and_merges() -> None:
    jobs = load(GITHUB)["jobs"]
    shard, merge = jobs["shard"], jobs["merge"]
    shards = shard["strategy"]["matrix"]["shard"]
    assert shard["strategy"]["fail-fast"] is False
    (command,) = [r for r in runs(shard) if "parity run" in r]
    assert f"--shard ${{{{ matrix.shard }}}}/{len(shards)}" in command
    out = re.search(r"--out (.+)$", command)
    assert out is not None
    (upload,) = step(shard, "actions/upload-artifact")
    assert upload["if"] == "always()" and upload["with"]["path"] == out.group(1)
    name = upload["with"]["name"]
    assert merge["needs"] == "shard" and merge["if"] == "always()"
    (download,) = step(merge, "actions/download-artifact")
    pattern = download["with"]["pattern"]
    assert re.fullmatch(pattern.replace("*", r".*"), name.replace("${{ matrix.shard }}", "2"))
    (merged,) = [r for r in runs(merge) if "parity merge" in r]
    assert f"{download['with']['path']}/{pattern}" in merged
    (report,) = step(merge, "actions/upload-artifact")
    for written in re.findall(r"--(?:report|junit|json) (\S+)", merged):
        assert written in report["with"]["path"].split()


def test_gitlab_shards_hand_their_artifacts_to_the_merge() -> None:
    data = load(GITLAB)
    shard, merge = data["parity-shard"], data["parity-merge"]
    assert data["stages"].index(shard["stage"]) < data["stages"].index(merge["stage"])
    assert isinstance(shard["parallel"], int) and shard["parallel"] > 1
    (command,) = [c for c in shard["script"] if "parity run" in c]
    assert "--shard ${CI_NODE_INDEX}/${CI_NODE_TOTAL}" in command
    out = re.search(r"--out (.+)$", command)
    assert out is not None
    assert shard["artifacts"]["when"] == "always"
    (paths,) = shard["artifacts"]["paths"]
    assert re.fullmatch(paths.rstrip("/").replace("*", r".*"), out.group(1).replace("$", "x"))
    assert merge["needs"] == [{"job": "parity-shard", "artifacts": True}]
    assert merge["when"] == "always"
    (merged,) = [c for c in merge["script"] if "parity merge" in c]
    assert paths.rstrip("/") in merged
    assert merge["artifacts"]["reports"]["junit"] == re.search(r"--junit (\S+)", merged).group(1)  # type: ignore[union-attr]


def actionlint(workflow: Path) -> subprocess.CompletedProcess[str]:
    """actionlint from the dev dependencies, with their shellcheck on PATH so that it also
    checks the `run:` scripts."""
    bin_dir = Path(sys.executable).parent
    return subprocess.run(
        [str(bin_dir / "actionlint"), "-shellcheck", str(bin_dir / "shellcheck"), str(workflow)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_actionlint_passes_the_github_workflow() -> None:
    done = actionlint(GITHUB)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_sees_a_broken_workflow(tmp_path: Path) -> None:
    # The lint above can fail: a misspelt matrix key and a shell error are both reported.
    broken = tmp_path / "broken.yml"
    text = GITHUB.read_text()
    assert "${{ matrix.shard }}" in text
    broken.write_text(text.replace("${{ matrix.shard }}", "${{ matrix.shrad }}", 1))
    done = actionlint(broken)
    assert done.returncode == 1 and "shrad" in done.stdout, done.stdout + done.stderr
    assert '"$PARITY_REQUIRE"' in text
    broken.write_text(text.replace('"$PARITY_REQUIRE"', "$PARITY_REQUIRE", 1))
    done = actionlint(broken)
    assert done.returncode == 1 and "SC2086" in done.stdout, done.stdout + done.stderr


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """Three scenarios of two mini-agent targets; the project's `.venv` is this one's, so
    the workflows' `.venv/bin/parity` commands run verbatim."""
    proj = Project(tmp_path / "proj")
    proj.write("parity.toml", mini_target("mini") + mini_target("mini-b"))
    for i in range(3):
        proj.write(f"scenarios/s{i}.yaml", TEXT_SCENARIO)
    (proj.root / ".venv").symlink_to(REPO / ".venv")
    done = proj.parity("record")
    assert done.returncode == 0, done.stdout
    return proj


def shell(proj: Project, command: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=proj.root,
        env=child_env(PARITY_REQUIRE="mini,mini-b", **env),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def concurrently(proj: Project, commands: list[tuple[str, dict[str, str]]]) -> None:
    procs = [
        subprocess.Popen(
            ["bash", "-c", c],
            cwd=proj.root,
            env=child_env(PARITY_REQUIRE="mini,mini-b", **env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for c, env in commands
    ]
    for p in procs:
        out = p.communicate(timeout=180)[0]
        assert p.returncode == 0, out


def merged_ok(done: subprocess.CompletedProcess[str], proj: Project) -> None:
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "9 pass" in out and "9 passed, 0 failed, 0 skipped" in out
    assert (proj.root / "parity-report" / "index.html").is_file()
    assert "<testsuites" in (proj.root / "parity.xml").read_text()


def test_the_github_workflow_runs_shards_apart_and_merges(project: Project) -> None:
    jobs = load(GITHUB)["jobs"]
    shards = jobs["shard"]["strategy"]["matrix"]["shard"]
    (command,) = [r for r in runs(jobs["shard"]) if "parity run" in r]
    concurrently(project, [(command.replace("${{ matrix.shard }}", str(k)), {}) for k in shards])
    # download-artifact with a pattern puts each artifact in a folder of its name.
    upload = step(jobs["shard"], "actions/upload-artifact")[0]["with"]
    download = step(jobs["merge"], "actions/download-artifact")[0]["with"]
    for k in shards:
        name = upload["name"].replace("${{ matrix.shard }}", str(k))
        source = project.root / upload["path"].replace("${{ matrix.shard }}", str(k))
        shutil.move(source, project.root / download["path"] / name)
    (merge,) = [r for r in runs(jobs["merge"]) if "parity merge" in r]
    merged_ok(shell(project, merge), project)


def test_the_gitlab_pipeline_runs_shards_apart_and_merges(project: Project) -> None:
    data = load(GITLAB)
    total = data["parity-shard"]["parallel"]
    (command,) = [c for c in data["parity-shard"]["script"] if "parity run" in c]
    node = {"CI_NODE_TOTAL": str(total)}
    concurrently(
        project, [(command, {**node, "CI_NODE_INDEX": str(k)}) for k in range(1, total + 1)]
    )
    (merge,) = [c for c in data["parity-merge"]["script"] if "parity merge" in c]
    merged_ok(shell(project, merge), project)
    assert os.path.isfile(project.root / "parity.json")
