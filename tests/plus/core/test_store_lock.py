"""One writer per session: two real acp-plus processes on one `--home`.

A live session holds an exclusive `flock` on `<home>/sessions/<id>.lock` from
session/new or resume until close or process exit. A second process may list the
session but not resume it; a SIGKILLed holder's lock (and the lock file it leaves) does
not block; and no process ever truncates away a turn another process committed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from plus_agent import REPO, RawAgent, World, WorldFactory, conversation, log_events

from acp_plus.core.store import SessionLocked, SessionStore, StoreError


def user_texts(events: list[dict[str, Any]]) -> list[str]:
    """The prompts in a log (not the model context the agent adds, which has a `source`)."""
    return [
        e["content"][0]["text"] for e in events if e["type"] == "user/message" and "source" not in e
    ]


async def start(w: World) -> RawAgent:
    agent = await RawAgent.start(w)
    response = await agent.call("initialize", {"protocolVersion": 1}, timeout=15)
    assert "result" in response, response
    return agent


async def prompt(agent: RawAgent, session_id: str, text: str) -> dict[str, Any]:
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    return await agent.call("session/prompt", params, timeout=15)


async def kill9(agent: RawAgent) -> None:
    agent.process.send_signal(signal.SIGKILL)
    await agent.process.wait()


async def stop(*agents: RawAgent) -> None:
    for agent in agents:
        if agent.process.returncode is None:
            await agent.close()


async def test_second_process_cannot_resume_until_the_holder_dies(world: WorldFactory) -> None:
    w = world(llm=[{"text": "first answer"}, {"text": "second answer"}])
    a = await start(w)
    b: RawAgent | None = None
    try:
        new = await a.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        sid = new["result"]["sessionId"]
        assert (await prompt(a, sid, "first question"))["result"] == {"stopReason": "end_turn"}
        lock = w.home / "sessions" / f"{sid}.lock"
        assert lock.exists()

        b = await start(w)
        # Reading is fine: the other process lists the session ...
        listed = await b.call("session/list", {"cwd": str(w.workdir)})
        assert [s["sessionId"] for s in listed["result"]["sessions"]] == [sid]
        # ... but cannot become a second writer.
        resume = {"sessionId": sid, "cwd": str(w.workdir)}
        refused = await b.call("session/resume", resume)
        assert refused["error"] == {
            "code": -32602,
            "message": f"Invalid params: session is already active: {sid}",
        }
        # A prompt there names no live session (the contract's unknown-session text).
        unknown = await prompt(b, sid, "sneaky")
        assert unknown["error"]["message"] == f"Invalid params: unknown session: {sid}"
        # The refused attempts changed nothing; A keeps writing.
        assert user_texts(log_events(w.home, sid)) == ["first question"]

        await kill9(a)
        # The dead holder leaves its lock file behind; it must not block.
        assert lock.exists()
        resumed = await b.call("session/resume", resume)
        assert "configOptions" in resumed["result"], resumed
        assert (await prompt(b, sid, "second question"))["result"] == {"stopReason": "end_turn"}
    finally:
        await stop(a, *([b] if b else []))

    # B saw A's turn: its model request carries A's question and answer ...
    assert conversation(w.model_requests()[-1]["messages"]) == [
        {"role": "user", "content": [{"type": "text", "text": "first question"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "first answer"}]},
        {"role": "user", "content": [{"type": "text", "text": "second question"}]},
    ]
    # ... and B's write kept A's turn in the log: both turns, seq contiguous.
    events = log_events(w.home, sid)
    assert user_texts(events) == ["first question", "second question"]
    assert [e["turn"] for e in events if e["type"] == "turn/start"] == [1, 2]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    # B's orderly exit released the lock and removed the file.
    assert not (w.home / "sessions" / f"{sid}.lock").exists()


async def test_turns_alternate_between_processes_without_loss(world: WorldFactory) -> None:
    """Both processes stay up; the session moves between them by close and resume.

    Before one-writer locking, B resuming while A was live and then prompting cut off
    whatever A committed after B read the log. Now each hand-over re-reads under the
    lock, so every turn survives every later write.
    """
    w = world(llm=[{"text": f"answer {i}"} for i in range(1, 5)])
    a = await start(w)
    b = await start(w)
    try:
        new = await a.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        sid = new["result"]["sessionId"]
        resume = {"sessionId": sid, "cwd": str(w.workdir)}
        # B cannot take a session fresh from session/new, before A's first prompt.
        assert "already active" in (await b.call("session/resume", resume))["error"]["message"]
        await prompt(a, sid, "q1 from A")
        assert "already active" in (await b.call("session/resume", resume))["error"]["message"]
        await a.call("session/close", {"sessionId": sid})
        assert "result" in await b.call("session/resume", resume)
        await prompt(b, sid, "q2 from B")
        assert "already active" in (await a.call("session/resume", resume))["error"]["message"]
        await b.call("session/close", {"sessionId": sid})
        assert "result" in await a.call("session/resume", resume)
        await prompt(a, sid, "q3 from A")
        await a.call("session/close", {"sessionId": sid})
        assert "result" in await b.call("session/resume", resume)
        await prompt(b, sid, "q4 from B")
    finally:
        await stop(a, b)
    events = log_events(w.home, sid)
    assert user_texts(events) == ["q1 from A", "q2 from B", "q3 from A", "q4 from B"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    last = conversation(w.model_requests()[-1]["messages"])
    assert [m["content"][0]["text"] for m in last] == [
        "q1 from A",
        "answer 1",
        "q2 from B",
        "answer 2",
        "q3 from A",
        "answer 3",
        "q4 from B",
    ]


# -- the store itself ------------------------------------------------------------------


def test_lock_is_exclusive_and_released(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    first = store.create("/w")
    assert first.locked  # a new session's log is born locked
    first.acquire()  # idempotent
    other = store.open(first.id)
    with pytest.raises(SessionLocked, match=first.id):
        other.acquire()
    assert not other.locked
    first.release()
    assert not first.lock_path.exists()
    other.acquire()
    assert other.locked
    other.release()


def test_a_left_behind_lock_file_does_not_block(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    log = store.create("/w")
    log.release()
    log.lock_path.write_text("")
    log.acquire()
    assert log.locked
    log.release()


def test_a_killed_holders_lock_is_recovered(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    log = store.create("/w")
    log.release()
    child = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from acp_plus.core.store import SessionStore
        log = SessionStore(Path({str(tmp_path)!r})).open({log.id!r})
        log.acquire()
        log.append({{"type": "turn/start", "turn": 1}})
        print("held", flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", child], cwd=REPO, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"held\n"
        with pytest.raises(SessionLocked):
            store.open(log.id).acquire()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert log.lock_path.exists()
    # The stale reader `log` re-reads under the lock and sees the child's event.
    log.acquire()
    assert [e["type"] for e in log.events()] == ["turn/start"]
    assert (
        log.append({"type": "turn/end", "turn": 1, "reason": {"kind": "interrupted"}})["seq"] == 2
    )
    log.release()


def test_a_stale_reader_never_truncates_anothers_events(tmp_path: Path) -> None:
    """The old bug: each log cut the file back to what it read at open on first append."""
    store = SessionStore(tmp_path)
    log = store.create("/w")
    log.release()  # the guard holds for unlocked writers too (e.g. an older acp-plus)
    log.append({"type": "turn/start", "turn": 1})
    stale = store.open(log.id)
    log.append({"type": "turn/end", "turn": 1, "reason": {"kind": "completed"}})
    with pytest.raises(StoreError, match="written by another process"):
        stale.append({"type": "turn/start", "turn": 2})
    # ... also after its own first append (the size no longer matches).
    fresh = store.open(log.id)
    fresh.append({"type": "turn/start", "turn": 2})
    with pytest.raises(StoreError, match="written by another process"):
        log.append({"type": "turn/start", "turn": 2})
    events = store.open(log.id).events()
    assert [e["type"] for e in events] == ["turn/start", "turn/end", "turn/start"]
    assert [e["seq"] for e in events] == [1, 2, 3]


def test_dropping_a_locked_log_releases_its_lock(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    log = store.create("/w")
    session_id, lock = log.id, log.lock_path
    del log
    assert not lock.exists()
    again = store.open(session_id)
    again.acquire()
    again.release()
