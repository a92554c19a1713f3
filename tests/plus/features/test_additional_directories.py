"""M3 `additionalDirectories` (docs/contract.md §6.2): validation and self-approval.

The rules first, as data (`validate`, `preapproved` with real directories under
tmp_path), then through the real process: the contract's outcome for a symlink that
escapes a root, `..` segments, a file, a missing directory, 17 entries and a write
outside every root; bash and read-only sessions still ask; a resume that declares no
roots gets none (nothing carries over).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block
from plus_agent import WorldFactory, raw_agent, sdk_agent

from acp_plus.core.approvals import ApprovalRequest
from acp_plus.features.additional_directories import MAX_ENTRIES, preapproved, validate
from acp_plus.protocol import schema_check
from acp_plus.wire.errors import RpcError

ESCALATE = "escalate sandbox to danger-full-access: write outside the workspace: x"


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """cwd, a root with a symlink out of it, a directory outside, a plain file."""
    paths = {name: tmp_path / name for name in ("cwd", "root", "outside")}
    for path in paths.values():
        path.mkdir()
    (paths["root"] / "sub").mkdir()
    os.symlink(paths["outside"], paths["root"] / "escape")
    os.symlink(paths["root"], tmp_path / "root-link")
    paths["file"] = tmp_path / "plain.txt"
    paths["file"].write_text("x")
    paths["tmp"] = tmp_path
    return paths


def detail(exc: pytest.ExceptionInfo[RpcError]) -> tuple[int, str]:
    return exc.value.code, exc.value.message


def test_validation_texts(tree: dict[str, Path]) -> None:
    cwd = str(tree["cwd"])
    cases = [
        (
            [str(tree["root"])] * (MAX_ENTRIES + 1),
            "additionalDirectories accepts at most 16 entries",
        ),
        (["rel/dir"], "additionalDirectories entries must be absolute paths: rel/dir"),
        ([""], "additionalDirectories entries must be absolute paths: "),
        (
            [str(tree["file"])],
            f"additionalDirectories entry is not an existing directory: {tree['file']}",
        ),
        (
            [str(tree["tmp"] / "missing")],
            f"additionalDirectories entry is not an existing directory: {tree['tmp'] / 'missing'}",
        ),
    ]
    for value, text in cases:
        with pytest.raises(RpcError) as raised:
            validate(value, cwd)
        assert detail(raised) == (-32602, f"Invalid params: {text}")
    # The ACP schema parse before dispatch (schema_check.py) catches a value that is not
    # a list of strings, as native 0.2.1-rc.2's SDK does: not a list (or null) reads as
    # none, and an entry that is not a string is dropped; `validate` sees the result.
    caught = [("/tmp", []), ([1, "/w"], ["/w"]), (None, []), (5, [])]
    for bad, seen in caught:
        params = {"cwd": cwd, "mcpServers": [], "additionalDirectories": bad}
        assert schema_check.check("session/new", params) is None
        parsed = schema_check.parse("session/new", params)
        assert parsed["additionalDirectories"] == seen


def test_roots_are_canonical_deduped_and_never_the_cwd(tree: dict[str, Path]) -> None:
    root, cwd = str(tree["root"]), str(tree["cwd"])
    assert validate(None, cwd) == validate([], cwd) == ()
    # 16 entries are fine; a symlink and `..` segments name the directory they reach,
    # so they collapse into one root; the cwd itself is never an extra root.
    declared = [
        root,
        str(tree["tmp"] / "root-link"),
        f"{tree['cwd']}/../root/sub/..",
        cwd,
        *[root] * 12,
    ]
    assert len(declared) == MAX_ENTRIES
    assert validate(declared, cwd) == (root,)
    # A symlink out of a root is a root of its own target, in declared order.
    assert validate([str(tree["root"] / "escape"), root], cwd) == (str(tree["outside"]), root)


def request(tool: str, file_path: Any, reason: str = ESCALATE) -> ApprovalRequest:
    return ApprovalRequest("s", "c", tool, {"file_path": file_path}, reason)


def test_self_approval_matrix(tree: dict[str, Path]) -> None:
    roots = (str(tree["root"]),)
    cwd = str(tree["cwd"])
    inside = str(tree["root"] / "sub" / "new.txt")

    def ok(req: ApprovalRequest, sandbox: str = "workspace-write") -> bool:
        return preapproved(req, roots, sandbox, cwd)

    assert ok(request("write", inside))
    assert ok(request("edit", inside))
    assert ok(request("write", "../root/a.txt"))  # relative to the cwd, still inside
    # The symlink leads out of the root; `..` climbs out of it; a path outside all roots.
    assert not ok(request("write", str(tree["root"] / "escape" / "a.txt")))
    assert not ok(request("write", f"{tree['root']}/../outside/a.txt"))
    assert not ok(request("write", str(tree["outside"] / "a.txt")))
    # Only write/edit, only sandbox escalations, only workspace-write, only a path.
    assert not ok(request("bash", inside))
    assert not ok(request("read", inside))
    assert not ok(request("write", inside, reason="tool asks: write_note"))
    assert not ok(request("write", inside), sandbox="read-only")
    assert not ok(request("write", inside), sandbox="danger-full-access")
    assert not ok(request("write", None))
    assert not preapproved(request("write", inside), (), "workspace-write", cwd)


async def _validation_error(agent: Any, method: str, params: dict[str, Any]) -> str:
    response = await agent.call(method, params)
    assert "error" in response, response
    assert response["error"]["code"] == -32602
    message: str = response["error"]["message"]
    return message


async def test_the_process_validates_on_new_and_resume(world: WorldFactory) -> None:
    w = world()
    root = w.workdir.parent / "root"
    root.mkdir()
    (w.workdir.parent / "plain.txt").write_text("x")
    cwd = str(w.workdir)
    async with raw_agent(w) as agent:
        init = await agent.call("initialize", {"protocolVersion": 1})
        caps = init["result"]["agentCapabilities"]["sessionCapabilities"]
        assert caps["additionalDirectories"] == {}
        new = {"cwd": cwd, "mcpServers": []}
        for extra, text in [
            ([str(root)] * 17, "additionalDirectories accepts at most 16 entries"),
            (["x"], "additionalDirectories entries must be absolute paths: x"),
            (
                [str(w.workdir.parent / "plain.txt")],
                "additionalDirectories entry is not an existing directory: "
                + str(w.workdir.parent / "plain.txt"),
            ),
        ]:
            message = await _validation_error(
                agent, "session/new", {**new, "additionalDirectories": extra}
            )
            assert message == f"Invalid params: {text}"
        ok = await agent.call("session/new", {**new, "additionalDirectories": [f"{root}/."]})
        sid = ok["result"]["sessionId"]
        await agent.call("session/close", {"sessionId": sid})
        # Resume checks again: a root that is gone now is refused.
        gone = str(w.workdir.parent / "gone")
        message = await _validation_error(
            agent,
            "session/resume",
            {"sessionId": sid, "cwd": cwd, "additionalDirectories": [gone]},
        )
        assert (
            message
            == f"Invalid params: additionalDirectories entry is not an existing directory: {gone}"
        )


async def test_flag_off_and_native_profile_refuse_like_native(world: WorldFactory) -> None:
    for w in (
        world(extra_config="enable_additional_directories = false\n"),
        world(profile="native"),
    ):
        async with raw_agent(w) as agent:
            init = await agent.call("initialize", {"protocolVersion": 1})
            caps = init["result"]["agentCapabilities"]["sessionCapabilities"]
            assert caps == {"close": {}, "list": {}, "resume": {}}
            params = {"cwd": str(w.workdir), "mcpServers": [], "additionalDirectories": ["/"]}
            message = await _validation_error(agent, "session/new", params)
            assert message == "Invalid params: additionalDirectories is not supported"


WIDER = {"sandbox_permissions": "danger-full-access", "justification": "It goes in the root."}
"""What a model adds after the file sandbox refused a write outside the workspace (native's
marker says to): the escalation §6.2 pre-approves inside a root."""


def _write(call_id: str, path: str, content: str = "x") -> dict[str, Any]:
    arguments = {"file_path": path, "content": content, **WIDER}
    return {"id": call_id, "name": "write", "arguments": arguments}


async def test_only_contained_writes_skip_the_client(world: WorldFactory, tmp_path: Path) -> None:
    """One turn: escalated writes and an edit inside the root go through unasked; `..`, a
    symlink out of the root, a path outside every root and a bash escalation each ask the client
    (which rejects, so nothing is written there). A plain bash call runs unasked in the
    OS sandbox, where the root is not writable: §6.2's pre-approval is write/edit only."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    os.symlink(outside, root / "escape")
    calls = [
        _write("in-1", str(root / "a.txt"), "first"),
        {
            "id": "in-2",
            "name": "edit",
            "arguments": {
                "file_path": str(root / "a.txt"),
                "old_string": "first",
                "new_string": "edited",
                **WIDER,
            },
        },
        _write("dotdot", f"{root}/../outside/b.txt"),
        _write("symlink", str(root / "escape" / "c.txt")),
        _write("elsewhere", str(outside / "d.txt")),
        {
            "id": "shell",
            "name": "bash",
            "arguments": {"description": "d", "command": f"echo x > {root}/e.txt"},
        },
        {
            "id": "shell-escalated",
            "name": "bash",
            "arguments": {
                "description": "d",
                "command": f"echo x > {root}/e.txt",
                "sandbox_permissions": "danger-full-access",
                "justification": "The file belongs in the extra root.",
            },
        },
    ]
    w = world(llm=[{"tool_calls": calls}, {"text": "done"}], builtin_tools=True)
    async with sdk_agent(w, permission="reject-once") as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await s.conn.new_session(
            cwd=str(w.workdir), mcp_servers=[], additional_directories=[str(root)]
        )
        result = await s.conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    assert result.stop_reason == "end_turn"
    asked = [r["toolCall"]["toolCallId"] for r in s.client.permission_requests]
    assert asked == ["dotdot", "symlink", "elsewhere", "shell-escalated"]
    assert (root / "a.txt").read_text() == "edited"
    assert sorted(os.listdir(outside)) == []
    assert sorted(os.listdir(root)) == ["a.txt", "escape"]
    # The model is told the roots in its runtime context (never on the wire).
    first = w.model_requests()[0]["messages"]
    notes = [
        b["text"]
        for m in first
        for b in m["content"]
        if "Additional workspace roots for this session" in b.get("text", "")
    ]
    assert len(notes) == 1 and f'"{root}"' in notes[0]


async def test_read_only_asks_and_a_resume_without_roots_has_none(
    world: WorldFactory, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    w = world(
        llm=[
            {"tool_calls": [_write("ro", str(root / "a.txt"))]},
            {"text": "asked"},
        ],
        builtin_tools=True,
        extra_config='sandbox = "read-only"\n',
    )
    async with sdk_agent(w, permission="reject-once") as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await s.conn.new_session(
            cwd=str(w.workdir), mcp_servers=[], additional_directories=[str(root)]
        )
        await s.conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    assert [r["toolCall"]["toolCallId"] for r in s.client.permission_requests] == ["ro"]
    assert not (root / "a.txt").exists()

    # workspace-write, a session created with the root, resumed without it: the root
    # is not carried over, so the write asks.
    w = world(
        llm=[
            {"tool_calls": [_write("first", str(root / "b.txt"))]},
            {"text": "wrote"},
            {"tool_calls": [_write("after-resume", str(root / "c.txt"))]},
            {"text": "asked"},
        ],
        builtin_tools=True,
    )
    async with sdk_agent(w, permission="reject-once") as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await s.conn.new_session(
            cwd=str(w.workdir), mcp_servers=[], additional_directories=[str(root)]
        )
        sid = new.session_id
        await s.conn.prompt(session_id=sid, prompt=[text_block("one")])
        await s.conn.close_session(session_id=sid)
        await s.conn.resume_session(session_id=sid, cwd=str(w.workdir))
        await s.conn.prompt(session_id=sid, prompt=[text_block("two")])
    assert [r["toolCall"]["toolCallId"] for r in s.client.permission_requests] == ["after-resume"]
    assert (root / "b.txt").exists() and not (root / "c.txt").exists()
