"""Sandbox decisions: which writes and commands need approval."""

from __future__ import annotations

from pathlib import Path

from acp_plus.core.sandbox import resolve_path, write_escalation


def test_write_decisions(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    inside, outside = resolve_path("a/b.txt", ws), resolve_path(str(tmp_path / "x"), ws)
    assert write_escalation(inside, "workspace-write", ws) is None
    assert write_escalation(outside, "danger-full-access", ws) is None
    assert write_escalation(outside, "workspace-write", ws) == (
        f"escalate sandbox to danger-full-access: write outside the workspace: {outside}"
    )
    assert write_escalation(inside, "read-only", ws) == (
        f"escalate sandbox to workspace-write: write {inside}"
    )


def test_dotdot_and_symlinks_cannot_escape_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to(tmp_path)
    for sneaky in ("../x", "link/x", str(ws / ".." / "x")):
        path = resolve_path(sneaky, ws)
        reason = write_escalation(path, "workspace-write", ws)
        assert reason is not None and reason.startswith("escalate sandbox to danger-full-access")
