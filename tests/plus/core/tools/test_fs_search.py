"""acp-plus's glob and grep against native 0.2.1-rc.2: the definitions and guidance the
recorded native showed its model, and the result texts (tools/fs-search records a run)."""

from __future__ import annotations

import sysconfig
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from acp_plus.core.tools import fs_search
from acp_plus.core.tools.base import ToolContext, ToolRegistry
from acp_plus.core.tools.families import ToolSetup, offered, select
from acp_plus.core.tools.fs_search import (
    FS_SEARCH_GUIDANCE,
    GREP_MAX_MATCHES,
    format_grep,
    fs_search_tools,
    workdir_relative,
)
from parity.view.dump import load_view

REPO = Path(__file__).resolve().parents[4]
NATIVE = REPO / "snapshots" / "tools" / "fs-search" / "native.yaml"


def _native_request() -> dict[str, Any]:
    recorded = load_view(NATIVE.read_text(encoding="utf-8"))
    body: dict[str, Any] = next(r["body"] for r in recorded["model"] if r["path"] == "/stream")
    return body


def test_definitions_and_guidance_are_natives() -> None:
    native = {tool["name"]: tool for tool in _native_request()["tools"]}
    for spec in ToolRegistry(fs_search_tools()).specs():
        assert spec == native[spec["name"]]
    # The recording mounts fs-search alone: grep's paragraph then leaves `read` out.
    paragraphs = _native_request()["system"].split("\n\n")
    alone = offered(select(["fs-search"]), ToolSetup()).guidance
    assert tuple(paragraphs[-2:]) == alone
    assert alone[0] == FS_SEARCH_GUIDANCE[0] and FS_SEARCH_GUIDANCE[1].startswith(alone[1])
    with_read = offered(select(["fs", "fs-search"]), ToolSetup()).guidance
    assert with_read[-2:] == FS_SEARCH_GUIDANCE


def test_grep_text_groups_caps_and_previews() -> None:
    assert format_grep([]) == "No matches found"
    assert format_grep([("a.py", 3, "x"), ("b.py", 1, "y"), ("a.py", 9, "z")]) == (
        "Found 3 matches\n\na.py\nLine 3: x\nLine 9: z\n\nb.py\nLine 1: y"
    )
    long = format_grep([("a", 1, "é" * 1500)])
    assert long.endswith("Line 1: " + "é" * 1000 + " (line truncated)")
    everything = [("a", n, "x") for n in range(1, GREP_MAX_MATCHES + 3)]
    many = format_grep(everything, "session-1")
    assert many.startswith(f"Found {GREP_MAX_MATCHES} of {GREP_MAX_MATCHES + 2} matches\n\n")
    assert f"Line {GREP_MAX_MATCHES}: x" in many and f"Line {GREP_MAX_MATCHES + 1}:" not in many
    # Every match goes to a file the footer names, as native's spill store saves it.
    footer = many.rsplit("\n\n", 1)[1]
    path = footer.removeprefix("(Full grep result stored at: ").split(". Use read", 1)[0]
    assert footer == (
        f"(Full grep result stored at: {path}. Use read with offset/limit, or grep this path "
        "to search within it.)"
    )
    assert Path(path).name.endswith("-grep-results.txt")
    rows = "\n".join(f"Line {n}: x" for n in range(1, GREP_MAX_MATCHES + 3))
    assert Path(path).read_text() == f"Found {GREP_MAX_MATCHES + 2} matches\n\na\n{rows}"


def test_an_unsaved_grep_result_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fs_search, "save_text", lambda *_: None)
    many = format_grep([("a", n, "x") for n in range(1, GREP_MAX_MATCHES + 3)])
    assert many.endswith(
        "\n\n(The complete result could not be saved; narrow pattern, path, or include to "
        "see more.)"
    )


def test_paths_are_shown_relative_to_the_workdir() -> None:
    assert workdir_relative("/w/a/b", "/w") == "a/b"
    assert workdir_relative("/w", "/w") == "."
    assert workdir_relative("/elsewhere/x", "/w") == "/elsewhere/x"
    assert workdir_relative("rel/x", "/w") == "rel/x"


async def test_over_the_cap_glob_keeps_the_first_page_and_a_bad_regex_is_refused(
    tmp_path: Path,
) -> None:
    for n in range(105):
        (tmp_path / f"f{n:03d}.txt").write_text("x\n")
    glob, grep = fs_search_tools()
    ctx = ToolContext("s", tmp_path, "c1", 1)
    result = await glob.run({"pattern": "*.txt"}, ctx)
    text = result.content[0]["text"]
    assert len(text.split("\n\n")[0].split("\n")) == 100
    page, footer = text.rsplit("\n\n", 1)
    path = footer.removeprefix("(Showing 100 of 105 paths. Full sorted result stored at: ")
    path = path.split(". Use read", 1)[0]
    assert footer == (
        f"(Showing 100 of 105 paths. Full sorted result stored at: {path}. Use read with "
        "offset/limit, or grep this path to search within it.)"
    )
    saved = Path(path).read_text().split("\n")
    assert len(saved) == 105 and saved[:100] == page.split("\n")
    bad = await grep.run({"pattern": "("}, ctx)
    assert bad.is_error
    assert bad.content[0]["text"].startswith("Error: grep pattern rejected by ripgrep: ")


@pytest.fixture
def no_ripgrep_wheel(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if the `ripgrep` distribution were not installed (`ripgrep()` is cached)."""

    def missing(name: str) -> Any:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    fs_search.ripgrep.cache_clear()
    yield
    fs_search.ripgrep.cache_clear()


@pytest.mark.usefixtures("no_ripgrep_wheel")
async def test_without_ripgrep_a_search_fails_with_natives_launch_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    glob, _ = fs_search_tools()
    result = await glob.run({"pattern": "*"}, ToolContext("s", tmp_path, "c1", 1))
    assert result.is_error and result.content[0]["text"] == (
        "Error: glob could not start its search command (ripgrep launch failed)"
    )


@pytest.mark.usefixtures("no_ripgrep_wheel")
def test_without_the_wheel_the_rg_on_path_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rg = tmp_path / "rg"
    rg.write_text("#!/bin/sh\n")
    rg.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert fs_search.ripgrep() == str(rg)


async def test_the_wheels_ripgrep_runs_whatever_is_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `ripgrep` dependency's rg, not a system's (Debian 12's 13.0 words its errors
    without native's "rg: "): a bad glob reads as native 0.2.1-rc.2's (explore, seed 43)."""
    own = fs_search.ripgrep()
    assert own is not None
    assert Path(own).parent == Path(sysconfig.get_path("scripts"))  # this venv's
    monkeypatch.setenv("PATH", str(tmp_path))  # no rg there at all
    glob, _ = fs_search_tools()
    result = await glob.run({"pattern": "["}, ToolContext("s", tmp_path, "c1", 1))
    assert result.is_error and result.content[0]["text"] == (
        "Error: glob pattern rejected by ripgrep: rg: error parsing glob '[': "
        "unclosed character class; missing ']'"
    )
