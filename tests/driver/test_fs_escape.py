"""The client's fs answers cannot be steered out of the workdir: not by a symlink, a
hard link, `..`, nor a directory swapped for a symlink while the answer is made; each
refusal because of a link is a run problem of the agent's (issue 33)."""

from __future__ import annotations

from pathlib import Path

from parity.driver.answers import fs_answer
from tests.support.driver import BASIC, chunks, messages, run, st

FS = {"fs": {"read": True, "write": True}}


async def test_links_dotdot_and_races_never_leave_the_workdir() -> None:
    t = await run(
        [*BASIC, st("prompt", session="s1", text="go")], "fs_escape", env={"RACES": "40"}, client=FS
    )
    assert t.steps[2].response["result"] == {"stopReason": "end_turn"}
    assert chunks(t) == ["escaped: 0 []"]
    answers = [m for m in messages(t, "out") if isinstance(m.get("id"), str)]
    refused = [a["error"]["message"] for a in answers[:4]]
    assert refused[0].startswith("Invalid params: path goes through a link out of the workdir")
    assert refused[1].startswith("Invalid params: path outside the workdir")
    assert "hard links" in refused[2] and "link is a symbolic link" in refused[3]
    escapes = [p for p in t.problems if p.startswith("fs escape: ")]
    assert escapes[0].startswith("fs escape: the agent's fs/write_text_file of ")
    assert len(escapes) >= 3  # the link, the hard link, the read; and lost races


def test_a_plain_write_and_read_below_the_workdir_still_work(tmp_path: Path) -> None:
    path = str(tmp_path / "a" / "b" / "c.txt")
    written = fs_answer(1, "fs/write_text_file", {"path": path, "content": "hé\n"}, tmp_path)
    assert written["result"] == {}
    read = fs_answer(2, "fs/read_text_file", {"path": path}, tmp_path)
    assert read["result"] == {"content": "hé\n"}
    inside = str(tmp_path / "a" / ".." / "a" / "b" / "c.txt")
    assert fs_answer(3, "fs/read_text_file", {"path": inside}, tmp_path)["result"]
