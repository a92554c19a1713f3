"""Hook decisions as native 0.1.0-rc.8's bridges make them (acp_plus/core/hooks.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_plus.core import hooks as hk

CALL = hk.Call("s-1", "/h/sessions/s-1.jsonl", "/w", 3, "call-1", "Bash", {"command": "ls"})


def _file(raw: Any, dialect: hk.Dialect = hk.CLAUDE) -> hk.HookFile:
    return hk.parse_file(raw, dialect)


def test_parse_wrapped_and_bare_maps_keep_command_hooks_only() -> None:
    group = {"matcher": "Bash", "hooks": [{"type": "command", "command": "a", "timeout": 5}]}
    wrapped = _file({"hooks": {"PreToolUse": [group]}})
    bare = _file({"PreToolUse": [group]})
    assert (
        wrapped.points == bare.points == {"PreToolUse": (hk.Group("Bash", (hk.Command("a", 5),)),)}
    )
    mixed = _file(
        {
            "PostToolUse": [
                {
                    "hooks": [
                        {"type": "prompt", "prompt": "?"},
                        {"command": "b"},
                        {"type": "command"},
                    ]
                },
                {"hooks": []},
                "junk",
            ],
            "Unknown": [{"hooks": [{"command": "c"}]}],
        }
    )
    # A hook without a type is a command; one without a command string is dropped.
    assert mixed.points == {"PostToolUse": (hk.Group(None, (hk.Command("b"),)),)}
    assert mixed.skipped == ('unsupported "prompt" hook on PostToolUse',)


def test_codex_skips_async_and_reads_timeout_sec() -> None:
    raw = {
        "PreToolUse": [
            {"hooks": [{"command": "a", "async": True}, {"command": "b", "timeoutSec": 2}]}
        ]
    }
    file = _file(raw, hk.CODEX)
    assert file.points == {"PreToolUse": (hk.Group(None, (hk.Command("b", 2),)),)}
    assert file.skipped == ("async hook on PreToolUse",)
    # Claude Code knows no alias: the default timeout.
    assert _file(raw).points["PreToolUse"][0].hooks[1] == hk.Command("b")


def test_an_invalid_regex_refuses_the_whole_file() -> None:
    with pytest.raises(
        hk.HookFileError, match=r'invalid claude-code regex matcher "\(" on event "PreToolUse"'
    ):
        _file({"PreToolUse": [{"matcher": "(", "hooks": [{"command": "a"}]}]})
    # The same text on an event without a matcher subject is dropped, not checked.
    assert (
        _file({"Stop": [{"matcher": "(", "hooks": [{"command": "a"}]}]}).points["Stop"][0].matcher
        is None
    )


def test_project_dir_substitution_is_claude_codes_only() -> None:
    raw = {"PreToolUse": [{"hooks": [{"command": "${CLAUDE_PROJECT_DIR}/x"}]}]}
    assert hk.parse_file(raw, hk.CLAUDE, "/p").points["PreToolUse"][0].hooks[0].command == "/p/x"
    assert (
        hk.parse_file(raw, hk.CODEX, "/p").points["PreToolUse"][0].hooks[0].command.startswith("${")
    )


@pytest.mark.parametrize(
    ("matcher", "query", "dialect", "expected"),
    [
        (None, "Bash", hk.CLAUDE, True),
        ("", "Bash", hk.CLAUDE, True),
        ("*", "Bash", hk.CODEX, True),
        ("Write|Edit", "Edit", hk.CLAUDE, True),
        ("Write|Edit", "WriteFile", hk.CLAUDE, False),  # literal names, exact
        ("Write|Edit", "WriteFile", hk.CODEX, True),  # Codex: an unanchored regex
        ("^mcp__", "mcp__fs__read", hk.CLAUDE, True),
        ("note$", "run_note", hk.CLAUDE, True),
        ("note$", "notes", hk.CLAUDE, False),
        ("(", "(", hk.CODEX, False),  # invalid at run time: no match
    ],
)
def test_matches(matcher: str | None, query: str, dialect: hk.Dialect, expected: bool) -> None:
    assert hk.matches(matcher, query, dialect) is expected


def test_decode_exit_codes() -> None:
    assert hk.decode(2, "ignored", "  no  \n", hk.PRE) == hk.Output(
        2, "no", "ignored", "block", "no"
    )
    assert hk.decode(2, "", "", hk.PRE).reason is None
    for code in (1, 3, 127, None):
        assert hk.decode(code, '{"decision": "block"}', "x", hk.PRE).decision is None
    assert hk.decode(0, "plain text", "", hk.PRE).decision is None
    assert hk.decode(0, '{"decision": ', "", hk.PRE).decision is None  # broken JSON


def test_decode_structured_output() -> None:
    def out(value: Any, event: str = hk.PRE) -> hk.Output:
        return hk.decode(0, json.dumps(value), "", event)

    assert out({"decision": "block", "reason": "r"}).decision == "block"
    assert out({"decision": "deny"}).decision is None  # top level: approve/block only
    specific = {
        "hookEventName": hk.PRE,
        "permissionDecision": "ask",
        "permissionDecisionReason": "why",
    }
    assert (
        out({"decision": "approve", "hookSpecificOutput": specific}).decision,
        out({"hookSpecificOutput": specific}).reason,
    ) == ("ask", "why")
    # A block naming another event (or none) is ignored, the top level still counts.
    other = {"decision": "block", "hookSpecificOutput": {**specific, "hookEventName": hk.POST}}
    assert out(other).decision == "block"
    assert out({"hookSpecificOutput": {"permissionDecision": "deny"}}).decision is None
    context = {"hookSpecificOutput": {"hookEventName": hk.POST, "additionalContext": "c"}}
    assert out(context, hk.POST).additional_context == "c"


def test_merge_deny_over_ask_over_allow_with_the_winners_reasons() -> None:
    allow = hk.Output(0, decision="allow", reason="fine")
    ask = hk.Output(0, decision="ask", reason="check")
    deny = hk.Output(0, decision="deny", reason="policy")
    block = hk.Output(2, decision="block", reason="stderr")
    assert hk.merge([]) == hk.Merged()
    assert hk.merge([allow]) == hk.Merged("allow")  # an allow's reason is not kept
    assert hk.merge([allow, ask]) == hk.Merged("ask", "check")
    assert hk.merge([deny, ask, allow, block]) == hk.Merged("deny", "policy\n\nstderr")
    assert hk.merge([hk.Output(2, decision="block")]) == hk.Merged("deny")
    contexts = [hk.Output(0, additional_context="a"), hk.Output(0, additional_context="b")]
    assert hk.merge(contexts).contexts == ("a", "b")


def test_pre_and_post_decisions() -> None:
    assert hk.pre_decision(hk.Merged("deny"), hk.CLAUDE) == ("deny", "blocked by PreToolUse hook")
    assert hk.pre_decision(hk.Merged("deny", "r"), hk.CODEX) == ("deny", "r")
    assert hk.pre_decision(hk.Merged("ask"), hk.CLAUDE) == ("ask", None)
    assert hk.pre_decision(hk.Merged("ask", "r"), hk.CODEX) is None  # Codex: blocks only
    assert hk.pre_decision(hk.Merged("allow"), hk.CLAUDE) is None
    assert hk.post_block(hk.Merged("deny")) == "blocked by PostToolUse hook"
    assert hk.post_block(hk.Merged("ask", "r")) is None


def test_stdin_shapes() -> None:
    claude = hk.stdin_text(hk.CLAUDE, hk.POST, CALL, "out")
    assert claude == (
        '{"session_id":"s-1","transcript_path":"/h/sessions/s-1.jsonl","cwd":"/w",'
        '"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},'
        '"tool_use_id":"call-1","tool_response":"out"}\n'
    )
    codex = hk.stdin_text(hk.CODEX, hk.PRE, CALL)
    assert codex == (
        '{"session_id":"s-1","transcript_path":"/h/sessions/s-1.jsonl","cwd":"/w",'
        '"hook_event_name":"PreToolUse","model":"","permission_mode":"default","turn_id":"3",'
        '"tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"call-1"}'
    )
    odd = hk.Call("s", "t", "/w", 1, "c", "read", {"command": 5})
    assert json.loads(hk.stdin_text(hk.CODEX, hk.PRE, odd))["tool_input"] == {"command": ""}


def test_env_and_selection_and_timeouts() -> None:
    assert hk.hook_env(hk.CLAUDE, "/w")["CLAUDE_PROJECT_DIR"] == "/w"
    assert "CLAUDE_PROJECT_DIR" not in hk.hook_env(hk.CODEX, "/w")
    assert hk.hook_env(hk.CODEX, "/w")["TERM"] == "dumb"
    file = _file(
        {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"command": "a"}, {"command": "b"}]},
                {"matcher": "Edit", "hooks": [{"command": "c"}]},
            ]
        }
    )
    assert [c.command for _, c in hk.selected(file, hk.PRE, "Bash")] == ["a", "b"]
    assert hk.selected(file, hk.POST, "Bash") == []
    assert (
        hk.Command("x").seconds(),
        hk.Command("x", 1).seconds(),
        hk.Command("x", 9999).seconds(),
    ) == (600, 1, 600)
    assert (
        hk.response_text(
            [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]
        )
        == "ab"
    )
