"""The runtime reads the launch directory's hooks files only with `hooks = true`."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_plus.live.runtime import build_runtime
from acp_plus.settings.config import build


@pytest.mark.parametrize("enabled", [False, True])
async def test_hooks_files_are_read_from_the_launch_directory_when_enabled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    launch = tmp_path / "launch"
    launch.mkdir()
    (launch / "hooks.json").write_text('{"PreToolUse": [{"hooks": [{"command": "true"}]}]}')
    monkeypatch.chdir(launch)
    runtime = await build_runtime(build({"hooks": enabled}, tmp_path / "home"))
    try:
        if enabled:
            assert runtime.hooks is not None
            assert [f.dialect for f in runtime.hooks.files] == ["claude-code"]
            assert runtime.hooks.homes == ((tmp_path / "home").resolve(),)
        else:
            assert runtime.hooks is None
    finally:
        await runtime.router.aclose()
