"""Broken scenario files: every problem is reported at once, at its exact place."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from parity.cli.validate import validate_paths
from parity.scenario.errors import ScenarioError, ScenarioInvalid
from parity.scenario.load import check_text, load_scenario

HEAD = """\
description: a scenario
steps:
  - initialize: {}
  - new_session: {as: s1}
"""


def findings(text: str) -> list[ScenarioError]:
    return check_text(textwrap.dedent(text), "f.yaml")[0]


def where(text: str) -> list[tuple[int, int, str, str]]:
    return [(f.line, f.column, f.key, f.message) for f in findings(text)]


# (case id, file text, expected (line, column, key, message) list, in order)
CASES: list[tuple[str, str, list[tuple[int, int, str, str]]]] = [
    (
        "unknown step kind",
        HEAD + "  - promt: {session: s1, text: hi}\n",
        [(5, 5, "steps[2]", "unknown key 'promt'")],
    ),
    (
        "unknown top-level key",
        "descripton: x\nsteps: [{initialize: {}}]\n",
        [(1, 1, "", "missing required key 'description'"), (1, 1, "", "unknown key 'descripton'")],
    ),
    (
        "wrong type",
        HEAD + "  - wait: {ms: soon}\n",
        [(5, 16, "steps[2].wait.ms", "expected an integer, got string 'soon'")],
    ),
    (
        "quoted number",
        'description: x\nllm:\n  - text: hi\n    usage: {input: "5", output: 2}\n'
        "steps: [{initialize: {}}]\n",
        [(4, 20, "llm[0].usage.input", "expected an integer, got string '5'")],
    ),
    (
        "bad YAML",
        "description: x\nsteps:\n  - initialize: {\n  - b\n",
        [(4, 3, "", "invalid YAML: expected the node content, but found '-'")],
    ),
    (
        "missing reason",
        "description: x\ndiverge:\n  - path: steps[0].result\nsteps: [{initialize: {}}]\n",
        [(3, 5, "diverge[0]", "missing required key 'reason'")],
    ),
    (
        "blank reason",
        "description: x\nmasks:\n  - {path: a.b, reason: '  '}\nsteps: [{initialize: {}}]\n",
        [(3, 25, "masks[0].reason", "reason is blank")],
    ),
    (
        "undefined session",
        HEAD + "  - prompt: {session: s2, text: hi}\n",
        [(5, 23, "steps[2].prompt.session", "session 's2' is never defined")],
    ),
    (
        "session used before definition",
        "description: x\nsteps:\n  - close_session: {session: s1}\n  - new_session: {as: s1}\n",
        [
            (
                3,
                30,
                "steps[0].close_session.session",
                "session 's1' is used before `new_session: {as: s1}` defines it",
            )
        ],
    ),
    (
        "session placeholder",
        HEAD + "  - request: {method: x, params: {id: '{session:zz}'}}\n",
        [
            (
                5,
                39,
                "steps[2].request.params.id",
                "session 'zz' (in a {session:...} placeholder) is never defined",
            )
        ],
    ),
    (
        "session defined twice",
        HEAD + "  - new_session: {as: s1}\n",
        [(5, 23, "steps[2].new_session.as", "session 's1' is already defined at line 4")],
    ),
    (
        "rule target not in targets",
        "description: x\ndiverge:\n  - {path: a, reason: b, targets: [opencode]}\n"
        "steps: [{initialize: {}}]\n",
        [(3, 36, "diverge[0].targets[0]", "target 'opencode' is not in this scenario's targets")],
    ),
    (
        "unknown update kind in a cancel trigger",
        HEAD + "  - prompt: {session: s1, text: x, cancel: {after: {update: tool_calls}}}\n",
        [
            (
                5,
                61,
                "steps[2].prompt.cancel.after.update",
                "expected one of "
                + ", ".join(
                    [
                        "user_message_chunk",
                        "agent_message_chunk",
                        "agent_thought_chunk",
                        "tool_call",
                        "tool_call_update",
                        "plan",
                        "available_commands_update",
                        "current_mode_update",
                        "config_option_update",
                        "session_info_update",
                        "usage_update",
                    ]
                )
                + "; got string 'tool_calls'",
            )
        ],
    ),
    (
        "duplicate tool names",
        "description: x\ntools:\n  - {name: echo}\n  - {name: echo}\nsteps: [{initialize: {}}]\n",
        [(4, 12, "tools[1].name", "duplicate tool name 'echo'")],
    ),
    (
        "duplicate YAML key",
        "description: x\ndescription: y\nsteps: [{initialize: {}}]\n",
        [(2, 1, "", "duplicate key 'description'; first at line 1")],
    ),
    (
        "mis-indented step parameter",
        HEAD + "  - prompt: {session: s1, text: x}\n    as: p1\n",
        [(6, 5, "steps[2]", "unknown key 'as'")],
    ),
    (
        "prompt without text or content",
        HEAD + "  - prompt: {session: s1}\n",
        [(5, 13, "steps[2].prompt", "needs one of the keys 'text' or 'content'")],
    ),
    (
        "two alternatives at once",
        HEAD + "  - wait: {ms: 5, update: tool_call}\n",
        [(5, 11, "steps[2].wait", "give only one of the keys 'ms', 'update'")],
    ),
    (
        "no alternative at all",
        HEAD + "  - wait: {}\n",
        [(5, 11, "steps[2].wait", "needs one of the keys 'ms' or 'update'")],
    ),
    (
        "cancel after the response timeout",
        "description: x\ntimeouts: {response: 2}\nsteps:\n  - new_session: {as: s1}\n"
        "  - prompt: {session: s1, text: x, cancel: {after: {ms: 2000}}}\n",
        [
            (
                5,
                57,
                "steps[1].prompt.cancel.after.ms",
                "the prompt's response timeout (2 s) ends the step first",
            )
        ],
    ),
    (
        "prompt with both",
        HEAD + "  - prompt: {session: s1, text: a, content: []}\n",
        [(5, 45, "steps[2].prompt.content", "give `text` or `content`, not both")],
    ),
    (
        "cursor next without a previous list",
        HEAD + "  - list_sessions: {cursor: next}\n",
        [
            (
                5,
                29,
                "steps[2].list_sessions.cursor",
                "`cursor: next` needs an earlier list_sessions step",
            )
        ],
    ),
    (
        "session defined inside the same parallel block",
        HEAD + "  - parallel:\n      - new_session: {as: s2}\n      - cancel: {session: s2}\n",
        [
            (
                7,
                27,
                "steps[2].parallel[1].cancel.session",
                "session 's2' is defined inside the same parallel block",
            )
        ],
    ),
    (
        "restart in parallel",
        HEAD + "  - parallel:\n      - restart: {}\n      - wait: {ms: 1}\n",
        [
            (
                6,
                18,
                "steps[2].parallel[0].restart",
                "`restart` cannot run in parallel with other steps",
            )
        ],
    ),
    (
        "llm chunks mixed with text",
        "description: x\nllm:\n  - text: a\n    chunks: [{type: finish}]\n"
        "steps: [{initialize: {}}]\n",
        [(4, 13, "llm[0].chunks", "`chunks` cannot be combined with text")],
    ),
    (
        "error with status and text",
        "description: x\nllm:\n  - text: a\n    error: {message: m, status: 500}\n"
        "steps: [{initialize: {}}]\n",
        [
            (
                4,
                33,
                "llm[0].error.status",
                "with `status` the request fails before any chunk: text never sent",
            )
        ],
    ),
    (
        "llm entry for a prompt nobody names",
        "description: x\nllm:\n  - {text: a, prompt: p2}\n"
        "  - {text: b, prompt: p1, match: {tools: none}}\n"
        + HEAD[len("description: a scenario\n") :]
        + "  - prompt: {session: s1, as: p1, text: hi}\n",
        [
            (3, 23, "llm[0].prompt", "no prompt step is named 'p2': the entry would never answer"),
            (
                4,
                23,
                "llm[1].prompt",
                "a side entry (`match`) answers any turn and is never used up",
            ),
        ],
    ),
    (
        "permission answers for a prompt nobody names",
        "description: x\nclient: {permission: {by_prompt: {q1: allow-once}}}\n"
        + HEAD[len("description: a scenario\n") :]
        + "  - prompt: {session: s1, as: p1, text: hi}\n",
        [
            (
                2,
                39,
                "client.permission.by_prompt.q1",
                "no prompt is named 'q1': its answers would never apply",
            )
        ],
    ),
    (
        "hanging tool with a result",
        "description: x\ntools:\n  - {name: t, hang: true, result: r}\nsteps: [{initialize: {}}]\n",
        [(3, 21, "tools[0].hang", "a hanging tool never answers, so its result is never used")],
    ),
    (
        "file outside the workdir",
        "description: x\nfiles:\n  ../escape.txt: hi\nsteps: [{initialize: {}}]\n",
        [
            (
                3,
                18,
                'files["../escape.txt"]',
                "'../escape.txt' must be a relative path inside the workdir",
            )
        ],
    ),
    (
        "home file outside the home",
        "description: x\nhome_files:\n  /etc/passwd: hi\nsteps: [{initialize: {}}]\n",
        [
            (
                3,
                16,
                'home_files["/etc/passwd"]',
                "'/etc/passwd' must be a relative path inside the home",
            )
        ],
    ),
    (
        "enum typo",
        "description: x\nclient: {permission: alow-once}\nsteps: [{initialize: {}}]\n",
        [
            (
                2,
                22,
                "client.permission",
                "expected one of allow-once, reject-once, cancelled, error, never; "
                "got string 'alow-once'",
            )
        ],
    ),
    (
        "step with two kinds",
        "description: x\nsteps:\n  - {initialize: {}, restart: {}}\n",
        [(3, 5, "steps[0]", "a step has exactly one key (its kind), got 2: initialize, restart")],
    ),
    (
        "unquoted boolean key",
        "description: x\nfiles:\n  yes: a\nsteps: [{initialize: {}}]\n",
        [(3, 3, "files", "key 'yes' is not a string")],
    ),
    (
        "child agent entry as a side entry",
        "description: x\nllm:\n  - text: hi\n    match: {tools: any}\n    agent: 1\n"
        "steps: [{initialize: {}}]\n",
        [(5, 12, "llm[0].agent", "a side entry (`match`) answers every agent's matching requests")],
    ),
    (
        "child agent zero",
        "description: x\nllm:\n  - {text: hi, agent: 0}\nsteps: [{initialize: {}}]\n",
        [(3, 23, "llm[0].agent", "must be >= 1, got 0")],
    ),
    (
        "child agent skipped",
        "description: x\nllm:\n  - {text: hi}\n  - {text: yo, agent: 2}\n"
        "steps: [{initialize: {}}]\n",
        [(4, 23, "llm[1].agent", "no entry is for child agent 1, yet this one is for child 2")],
    ),
    ("empty file", "", [(1, 1, "", "empty file")]),
    ("not a mapping", "- a\n", [(1, 1, "", "expected a mapping, got a list")]),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_broken_file_is_reported_at_its_place(
    text: str, expected: list[tuple[int, int, str, str]]
) -> None:
    assert where(text) == expected


def test_hints_suggest_the_fix() -> None:
    by_message = {f.message: f.hint for f in findings(HEAD + "  - promt: {session: s1}\n")}
    assert by_message["unknown key 'promt'"] == "did you mean 'prompt'?"
    typo = findings("description: x\nclient: {permission: alow-once}\nsteps: [{initialize: {}}]\n")
    assert typo[0].hint == "did you mean 'allow-once'?"
    reason = findings("description: x\ndiverge: [{path: a}]\nsteps: [{initialize: {}}]\n")
    assert "why" in reason[0].hint
    later = findings(
        "description: x\nsteps:\n  - cancel: {session: s1}\n  - new_session: {as: s1}\n"
    )
    assert later[0].hint == "it is defined later, at line 4"


def test_every_problem_in_a_file_is_reported_at_once() -> None:
    text = HEAD + "  - promt: {}\n  - wait: {ms: soon}\n  - prompt: {session: nope, text: x}\n"
    assert [f.key for f in findings(text)] == [
        "steps[2]",
        "steps[3].wait.ms",
        "steps[4].prompt.session",
    ]


def test_undeclared_tool_call_is_a_warning_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "description: x\nllm:\n  - tool_calls: [{id: c1, name: read}]\nsteps: [{initialize: {}}]\n"
    )
    scenario = load_scenario(path)
    assert [(w.severity, w.key, w.message) for w in scenario.warnings] == [
        ("warning", "llm[0].tool_calls[0].name", "tool 'read' is not declared in `tools`")
    ]


def test_a_call_wrong_on_purpose_says_so_and_gets_no_warning(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    calls = "[{id: c1, name: nope, arguments: 'not json'%s}]"
    for marker, warnings in (("", 2), (", malformed: true", 0)):
        llm = f"llm:\n  - tool_calls: {calls % marker}\n"
        path.write_text(f"description: x\n{llm}steps: [{{initialize: {{}}}}]\n")
        assert len(load_scenario(path).warnings) == warnings


def test_str_is_file_line_column_key_message_hint(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(HEAD + "  - promt: {session: s1}\n")
    with pytest.raises(ScenarioInvalid) as caught:
        load_scenario(path)
    assert [str(e) for e in caught.value.errors] == [
        f"{path}:5:5: steps[2]: unknown key 'promt' (did you mean 'prompt'?)"
    ]
    assert str(caught.value) == str(caught.value.errors[0])
    top = ScenarioError("f.yaml", 0, 0, "", "no such file or directory")
    assert str(top) == "f.yaml: (top level): no such file or directory"
    warn = ScenarioError("f.yaml", 3, 7, "llm[0]", "odd", "why", "warning")
    assert str(warn) == "f.yaml:3:7: llm[0]: warning: odd (why)"


def test_validate_paths_expands_directories_and_reports_missing_files(tmp_path: Path) -> None:
    (tmp_path / "group").mkdir()
    (tmp_path / "group" / "ok.yaml").write_text(HEAD)
    (tmp_path / "group" / "bad.yaml").write_text("description: 5\nsteps: [{initialize: {}}]\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "bad.yaml").write_text("nope: 1\n")
    found = validate_paths([tmp_path, tmp_path / "missing.yaml"])
    assert [str(f) for f in found] == [
        f"{tmp_path}/group/bad.yaml:1:14: description: expected a string, got number 5",
        f"{tmp_path}/missing.yaml: (top level): no such file or directory",
    ]


def test_merge_keys_and_anchors_are_not_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "merge.yaml"
    path.write_text(
        "description: x\n"
        "llm:\n"
        "  - &base {text: hi, usage: {input: 1, output: 2}}\n"
        "  - <<: *base\n"
        "    text: bye\n"
        "steps: [{initialize: {}}]\n"
    )
    scenario = load_scenario(path)
    assert [e.params for e in scenario.llm] == [
        {"text": "hi", "usage": {"input": 1, "output": 2}},
        {"text": "bye", "usage": {"input": 1, "output": 2}},
    ]


def test_several_documents_are_one_error() -> None:
    assert where("description: x\n---\ndescription: y\n") == [
        (2, 1, "", "invalid YAML: but found another document")
    ]


def test_builtin_tool_calls_need_no_declaration_but_must_not_shadow_one() -> None:
    builtin = "description: x\nllm:\n  - tool_calls: [{id: c1, name: read, builtin: true}]\n"
    assert findings(builtin + "steps: [{initialize: {}}]\n") == []
    shadow = "description: x\ntools: [{name: read}]\n" + builtin.split("\n", 1)[1]
    assert where(shadow + "steps: [{initialize: {}}]\n") == [
        (4, 48, "llm[0].tool_calls[0].builtin", "'read' is a fixture tool declared in `tools`")
    ]


def test_a_non_string_tool_name_is_a_finding_not_a_crash() -> None:
    # Found by the mutation fuzzer: the cross-checks built a set of tool names and hashed
    # the mapping given as a name.
    from parity.scenario.load import check_text

    text = "description: d\ntools:\n  - name: {a: 1}\nsteps:\n  - initialize: {}\n"
    errors = check_text(text, "x.yaml")[0]
    assert [(e.line, e.key, e.message) for e in errors] == [
        (3, "tools[0].name", "expected a string, got a mapping")
    ]


def test_a_wait_for_updates_without_a_session_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        HEAD
        + "  - wait: {update: available_commands_update}\n"  # races the session/new answer
        + "  - wait: {update: available_commands_update, session: s1}\n"
        + "  - wait: {ms: 10}\n"
        + "  - wait: {update: plan, session: s2}\n"
    )
    found = check_text(path.read_text(), str(path))[0]
    assert [str(f) for f in found] == [
        f"{path}:5:20: steps[2].wait.update: warning: without `session:` a wait counts only "
        "updates after the previous step's response, and misses one the agent sends before "
        "its session/new answer (as available_commands_update often is) (add `session: s1`: "
        "it counts s1's updates from its session/new request)",
        # A wait's session is checked like any step's.
        f"{path}:8:35: steps[5].wait.session: session 's2' is never defined "
        "(define it first with `- new_session: {as: s2}`)",
    ]
    # Without sessions there is nothing to race: no warning.
    bare = "description: a scenario\nsteps:\n  - initialize: {}\n  - wait: {update: plan}\n"
    assert check_text(bare, "b.yaml")[0] == []
