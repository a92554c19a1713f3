"""`schema_check.parse` and `schema_gen`: the output native 0.2.1-rc.2's ACP SDK (1.4.0,
zod 4.4.3) hands its handlers, and the generator rules that give it.

The SDK's generated zod schemas catch a refused value of an
`x-deserialize-default-on-error` key (its fallback: the default, `[]`, or absent), drop
the refused items of an `x-deserialize-skip-invalid-items` array, refuse only a missing
*required* caught key (`Required value is missing`), fill an absent key's `default`,
and strip keys the schema does not declare. The live native accepts the same requests
(scenarios/protocol/schema-errors.yaml).
"""

from __future__ import annotations

from acp_plus.protocol import schema_gen, schema_table
from acp_plus.protocol.schema_check import Issue, check, issues, parse, run
from acp_plus.wire.frames import UNDEFINED

NO_CAPS = {
    "fs": {"readTextFile": False, "writeTextFile": False},
    "terminal": False,
    "auth": {"terminal": False},
}
"""1.4.0's default clientCapabilities (the pinned schema's `default`)."""


def test_an_absent_key_takes_its_default_and_a_refused_one_its_fallback() -> None:
    assert parse("initialize", {"protocolVersion": 1}) == {
        "protocolVersion": 1,
        "clientCapabilities": NO_CAPS,
    }
    mistyped = {"protocolVersion": 1, "clientCapabilities": 5, "clientInfo": 7, "_meta": 5}
    assert parse("initialize", mistyped) == {"protocolVersion": 1, "clientCapabilities": NO_CAPS}
    # Inside the capabilities each key is caught on its own.
    caps = {"fs": {"readTextFile": True}, "terminal": "x", "elicitation": {"form": {}}}
    assert parse("initialize", {"protocolVersion": 1, "clientCapabilities": caps}) == {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": True, "writeTextFile": False},
            "terminal": False,
            "auth": {"terminal": False},
            "elicitation": {"form": {}},
        },
    }


def test_a_default_is_a_fresh_copy_each_time() -> None:
    first = parse("initialize", {"protocolVersion": 1})
    first["clientCapabilities"]["fs"]["readTextFile"] = True
    assert parse("initialize", {"protocolVersion": 1})["clientCapabilities"] == NO_CAPS


def test_a_lenient_array_drops_refused_items_and_reads_a_refused_list_as_empty() -> None:
    server = {"name": "a", "command": "/bin/a", "args": [], "env": [], "extra": 1}
    parsed = parse("session/new", {"cwd": "/w", "mcpServers": [5, server, {"type": "http"}]})
    declared = {k: v for k, v in server.items() if k != "extra"}
    assert parsed == {"cwd": "/w", "mcpServers": [declared]}
    mistyped: list[object] = ["x", None, 5, {}]
    for value in mistyped:
        params = {"cwd": "/w", "mcpServers": value, "additionalDirectories": value}
        assert parse("session/new", params) == {
            "cwd": "/w",
            "additionalDirectories": [],
            "mcpServers": [],
        }
    parsed = parse("session/resume", {"sessionId": "s", "cwd": "/w", "mcpServers": [1]})
    assert parsed == {"sessionId": "s", "cwd": "/w", "mcpServers": []}


def test_a_missing_required_caught_key_is_a_non_fatal_custom_issue() -> None:
    assert issues(schema_table.DEFS["NewSessionRequest"], {"cwd": "/w"}) == [
        Issue(("mcpServers",), "Required value is missing", fatal=False)
    ]
    # Present, it never fails; absent beside a refused cwd, both are reported in order.
    assert check("session/load", {"mcpServers": None, "cwd": 1, "sessionId": "s"}) == {
        "_errors": [],
        "cwd": {"_errors": ["Invalid input: expected string, received number"]},
    }


def test_undeclared_keys_are_stripped_and_an_intersection_merges() -> None:
    block = {"type": "text", "text": "hi", "annotations": 5, "extra": 1, "_meta": {"k": 1}}
    parsed = parse("session/prompt", {"sessionId": "s", "prompt": [block], "x": 1})
    text = {"text": "hi", "_meta": {"k": 1}, "type": "text"}
    assert parsed == {"sessionId": "s", "prompt": [text]}
    link = {"type": "resource_link", "name": "n", "uri": "u", "size": "big", "mimeType": 5}
    parsed = parse("session/prompt", {"sessionId": "s", "prompt": [link]})
    assert parsed["prompt"] == [{"name": "n", "uri": "u", "type": "resource_link"}]
    option = {"sessionId": "s", "configId": "c", "type": "boolean", "value": True}
    assert parse("session/set_config_option", option) == option
    # The string variant has no `type`: a stray one is stripped.
    option = {"sessionId": "s", "configId": "c", "type": "other", "value": "v"}
    assert parse("session/set_config_option", option) == {
        "value": "v",
        "sessionId": "s",
        "configId": "c",
    }


def test_null_passes_a_nullish_key_and_a_refused_value_keeps_its_issues() -> None:
    assert parse("session/list", {"cwd": None}) == {"cwd": None}
    _, found = run(schema_table.DEFS["ListSessionsRequest"], {"cwd": 5})
    assert found == [Issue(("cwd",), "Invalid input: expected string, received number")]
    assert run("unknown", UNDEFINED) == (UNDEFINED, [])


def test_the_generator_rules_on_a_small_schema() -> None:
    lenient = {"x-deserialize-default-on-error": True, "x-deserialize-skip-invalid-items": True}
    schema = {
        "$defs": {
            "NewSessionRequest": {
                "type": "object",
                "x-side": "agent",
                "x-method": "session/new",
                "required": ["z", "n", "mcpServers"],
                "properties": {
                    "z": {"type": "string"},
                    "n": {"type": ["string", "null"]},
                    "o": {"type": "integer", "format": "int64"},
                    "c": {
                        "anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}],
                        "x-deserialize-default-on-error": True,
                    },
                    "d": {
                        "type": "boolean",
                        "default": False,
                        "x-deserialize-default-on-error": True,
                    },
                    "mcpServers": {"type": "array", "items": {"type": "string"}},
                    "l": {"type": "array", "items": {"type": "string"}, **lenient},
                    "_meta": {"type": ["object", "null"], "additionalProperties": True},
                },
            },
            "X": {"type": "integer", "format": "uint16", "minimum": 0, "maximum": 9},
            "McpServer": {"anyOf": [{"allOf": [{"$ref": "#/$defs/X"}]}]},
            "ClientSessionCapabilities": {"properties": {"notices": {}}},
        }
    }
    methods, table = schema_gen.build(schema)
    assert methods == {"session/new": "NewSessionRequest"}
    # The schema's key order (zod's); the 1.4.0 baseline makes mcpServers lenient.
    assert table["NewSessionRequest"] == (
        "object",
        (
            ("z", "string", "required"),
            ("n", "string", "nullable"),
            ("o", "number", "optional"),
            ("c", "#X", "nullish", {"catch": "absent"}),
            ("d", "boolean", "optional", {"default": False, "catch": "default"}),
            ("mcpServers", ("skip", "string"), "required", {"catch": "empty"}),
            ("l", ("skip", "string"), "optional", {"catch": "empty"}),
            ("_meta", "record", "nullish"),
        ),
    )
    assert table["X"] == ("int", 0, 9)


def test_the_pinned_schema_gets_1_4_0s_leniencies() -> None:
    defs = schema_table.DEFS
    new = dict((p[0], p[1:]) for p in defs["NewSessionRequest"][1])
    assert new["mcpServers"] == (("skip", "#McpServer"), "required", {"catch": "empty"})
    assert new["additionalDirectories"] == (("skip", "string"), "optional", {"catch": "empty"})
    assert [p[0] for p in defs["ClientSessionCapabilities"][1]] == [
        "compaction",
        "configOptions",
        "_meta",
    ]
    assert [p[0] for p in defs["McpServerAcp"][1]] == ["name", "serverId", "_meta"]
