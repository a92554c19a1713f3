"""Sandbox helpers: resolving a path argument (what the approval features check)."""

from __future__ import annotations

from pathlib import Path

from acp_plus.core.sandbox import is_inside, resolve_path


def test_dotdot_and_symlinks_are_resolved_before_a_path_is_judged(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to(tmp_path)
    assert is_inside(resolve_path("a/b.txt", ws), ws.resolve())
    for sneaky in ("../x", "link/x", str(ws / ".." / "x")):
        path = resolve_path(sneaky, ws)
        assert path == (tmp_path / "x").resolve()
        assert not is_inside(path, ws.resolve())
