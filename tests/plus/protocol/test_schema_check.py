"""`acp_plus.protocol.schema_check`: the ACP SDK's zod 4 schema check of request params.

The expected data below was answered by the live native dsh-acp 0.2.1-rc.2 (ACP SDK
1.4.0, zod 4.4.3) to the same params (scenarios/protocol/schema-errors.yaml records
most of them); the rest are zod 4 semantics the module docstring lists. The output a
handler gets is tested in test_schema_parse.py.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_plus.protocol import schema_check, schema_gen, schema_table
from acp_plus.protocol.schema_check import Issue, check, format_issues, issues, parsed_type
from acp_plus.wire.errors import RpcError
from acp_plus.wire.frames import UNDEFINED
from parity.checks.acp_schema import fetch, load_schema

OBJ = "Invalid input: expected object, received number"


def one(key: str, *messages: str) -> dict[str, Any]:
    return {"_errors": [], key: {"_errors": list(messages)}}


LIVE: list[tuple[str, Any, dict[str, Any]]] = [
    (
        "initialize",
        {},
        one("protocolVersion", "Invalid input: expected number, received undefined"),
    ),
    (
        "initialize",
        {"protocolVersion": 1.5},
        one("protocolVersion", "Invalid input: expected int, received number"),
    ),
    (
        "initialize",
        {"protocolVersion": 70000},
        one("protocolVersion", "Too big: expected number to be <=65535"),
    ),
    (
        "initialize",
        {"protocolVersion": -1},
        one("protocolVersion", "Too small: expected number to be >=0"),
    ),
    (
        "initialize",
        {"protocolVersion": "1"},
        one("protocolVersion", "Invalid input: expected number, received string"),
    ),
    (
        "initialize",
        {"protocolVersion": None},
        one("protocolVersion", "Invalid input: expected number, received null"),
    ),
    ("initialize", [1], {"_errors": ["Invalid input: expected object, received array"]}),
    ("initialize", UNDEFINED, {"_errors": ["Invalid input: expected object, received undefined"]}),
    ("initialize", None, {"_errors": ["Invalid input: expected object, received null"]}),
    ("authenticate", {}, one("methodId", "Invalid input: expected string, received undefined")),
    (
        "authenticate",
        {"methodId": 5},
        one("methodId", "Invalid input: expected string, received number"),
    ),
    (
        "authenticate",
        {"methodId": None},
        one("methodId", "Invalid input: expected string, received null"),
    ),
    (
        "session/new",
        {},
        {
            "_errors": [],
            "cwd": {"_errors": ["Invalid input: expected string, received undefined"]},
            "mcpServers": {"_errors": ["Required value is missing"]},
        },
    ),
    (
        "session/new",
        {"cwd": 5, "mcpServers": "x"},
        one("cwd", "Invalid input: expected string, received number"),
    ),
    ("session/new", {"cwd": "/w"}, one("mcpServers", "Required value is missing")),
    (
        "session/prompt",
        {},
        {
            "_errors": [],
            "prompt": {"_errors": ["Invalid input: expected array, received undefined"]},
            "sessionId": {"_errors": ["Invalid input: expected string, received undefined"]},
        },
    ),
    (
        "session/prompt",
        {"sessionId": "s", "prompt": [5]},
        {"_errors": [], "prompt": {"0": {"_errors": [OBJ] * 10}, "_errors": []}},
    ),
    (
        "session/prompt",
        {"sessionId": "s", "prompt": "hi"},
        one("prompt", "Invalid input: expected array, received string"),
    ),
]


ACCEPTED: list[tuple[str, Any]] = [
    # Caught keys (x-deserialize-default-on-error): a mistyped value is never refused.
    ("initialize", {"protocolVersion": 1, "clientCapabilities": 5}),
    (
        "initialize",
        {
            "protocolVersion": 1,
            "_meta": 5,
            "clientInfo": 7,
            "clientCapabilities": {"fs": 5, "terminal": "x", "auth": None, "elicitation": 5},
        },
    ),
    # Arrays that skip refused items: no item and no mistyped list fails the request.
    ("session/new", {"cwd": "/w", "mcpServers": [5]}),
    ("session/new", {"cwd": "/w", "mcpServers": [{"type": "http"}]}),
    ("session/new", {"cwd": "/w", "mcpServers": [], "additionalDirectories": None}),
]


@pytest.mark.parametrize(("method", "params", "data"), LIVE)
def test_native_answers(method: str, params: Any, data: dict[str, Any]) -> None:
    assert check(method, params) == data


@pytest.mark.parametrize(("method", "params"), ACCEPTED)
def test_native_accepts(method: str, params: Any) -> None:
    assert check(method, params) is None


def test_json_key_order_is_javascripts() -> None:
    # A JavaScript object lists integer-like keys first, so `"0"` comes before `_errors`.
    data = check("session/prompt", {"sessionId": "s", "prompt": [{}, 5]})
    assert data is not None
    assert list(data["prompt"]) == ["0", "1", "_errors"]
    assert json.dumps(data).startswith('{"_errors": [], "prompt": {"0": ')


def test_a_union_of_objects_flattens_every_options_field_issues() -> None:
    # Native's answer to `prompt: [{type: "text"}]`: each option's issues by path.
    data = check("session/prompt", {"sessionId": "s", "prompt": [{"type": "text"}]})
    undefined = "Invalid input: expected {}, received undefined"
    assert data == {
        "_errors": [],
        "prompt": {
            "0": {
                "_errors": [],
                "text": {"_errors": [undefined.format("string")]},
                "data": {"_errors": [undefined.format("string")] * 2},
                "mimeType": {"_errors": [undefined.format("string")] * 2},
                "type": {
                    "_errors": [
                        'Invalid input: expected "image"',
                        'Invalid input: expected "audio"',
                        'Invalid input: expected "resource_link"',
                        'Invalid input: expected "resource"',
                    ]
                },
                "name": {"_errors": [undefined.format("string")]},
                "uri": {"_errors": [undefined.format("string")]},
                "resource": {"_errors": [undefined.format("object")] * 2},
            },
            "_errors": [],
        },
    }
    # Only the order of `_errors` entries is a wire fact; the keys' order follows paths.
    assert data is not None
    assert list(data["prompt"]["0"])[:3] == ["_errors", "text", "data"]


def test_the_first_passing_union_option_wins() -> None:
    blocks = [
        {"type": "text", "text": "hi"},
        {"type": "resource_link", "name": "n", "uri": "u", "size": 1.5},  # size: z.number()
        {"type": "resource", "resource": {"uri": "u", "blob": "AA=="}},
    ]
    assert check("session/prompt", {"sessionId": "s", "prompt": blocks}) is None


def test_optional_nullish_and_caught_keys() -> None:
    ok = {"protocolVersion": 0, "clientInfo": {"name": 5}, "_meta": None}
    assert check("initialize", ok) is None  # clientInfo is caught, _meta nullish
    assert check("initialize", {"protocolVersion": 65535, "clientCapabilities": {}}) is None
    assert check("session/list", {"cwd": None, "cursor": None}) is None
    assert check("session/list", {"cwd": 5}) == one(
        "cwd", "Invalid input: expected string, received number"
    )
    # session/resume's mcpServers is optional and caught: absent and null both pass.
    assert check("session/resume", {"sessionId": "s", "cwd": "/w"}) is None
    assert check("session/resume", {"sessionId": "s", "cwd": "/w", "mcpServers": None}) is None
    # session/load's mcpServers is required and caught: only a missing key is refused.
    assert check("session/load", {"sessionId": "s", "cwd": "/w", "mcpServers": 5}) is None
    assert check("session/load", {"sessionId": "s", "cwd": "/w"}) == one(
        "mcpServers", "Required value is missing"
    )


def test_integers_outside_the_safe_range_report_both_checks() -> None:
    big = check("initialize", {"protocolVersion": 2**60})
    assert big == one(
        "protocolVersion",
        "Too big: expected int to be <=9007199254740991",
        "Too big: expected number to be <=65535",
    )
    small = check("initialize", {"protocolVersion": -(2**60)})
    assert small == one(
        "protocolVersion",
        "Too small: expected int to be >=-9007199254740991",
        "Too small: expected number to be >=0",
    )
    assert check("initialize", {"protocolVersion": 1.0}) is None  # JSON 1.0 is the number 1
    inf = check("initialize", {"protocolVersion": math.inf})  # JSON 1e400 parses to Infinity
    assert inf == one("protocolVersion", "Invalid input: expected number, received number")
    assert check("initialize", {"protocolVersion": True}) == one(
        "protocolVersion", "Invalid input: expected number, received boolean"
    )


def test_literals_and_enums_compare_like_javascript() -> None:
    assert issues(("literal", 1), True) == [Issue((), "Invalid input: expected 1")]
    assert issues(("literal", True), 1) == [Issue((), "Invalid input: expected true")]
    assert issues(("enum", ("a", "b")), "c") == [
        Issue((), 'Invalid option: expected one of "a"|"b"')
    ]
    assert issues(("enum", ("a",)), "c") == [Issue((), 'Invalid input: expected "a"')]
    assert issues(("enum", ("a", "b")), "b") == []


def test_a_union_returns_the_one_option_that_did_not_abort() -> None:
    # Bounds are checks that do not abort: an option failing only them is the answer.
    node = ("union", ("string", ("int", 0, 10)))
    assert issues(node, 11) == [Issue((), "Too big: expected number to be <=10", fatal=False)]
    two = ("union", (("int", 0, 5), ("int", 0, 10)))
    (union,) = issues(two, 11)
    assert union.message == "Invalid input" and len(union.union) == 2
    assert format_issues([union]) == {
        "_errors": ["Too big: expected number to be <=5", "Too big: expected number to be <=10"]
    }


def test_an_intersection_reports_left_then_right() -> None:
    node = (
        "and",
        ("object", (("a", "string", "required"),)),
        ("object", (("b", "string", "required"),)),
    )
    assert [i.path for i in issues(node, {})] == [("a",), ("b",)]


def test_set_config_option_is_a_union_beside_an_object() -> None:
    assert (
        check("session/set_config_option", {"sessionId": "s", "configId": "c", "value": "v"})
        is None
    )
    typed = {"sessionId": "s", "configId": "c", "type": "boolean", "value": False}
    assert check("session/set_config_option", typed) is None
    assert check("session/set_config_option", {}) == {
        "_errors": [],
        "type": {"_errors": ['Invalid input: expected "boolean"']},
        "value": {
            "_errors": [
                "Invalid input: expected boolean, received undefined",
                "Invalid input: expected string, received undefined",
            ]
        },
        "configId": {"_errors": ["Invalid input: expected string, received undefined"]},
        "sessionId": {"_errors": ["Invalid input: expected string, received undefined"]},
    }


def test_leaves_refuse_what_javascript_tells_apart() -> None:
    assert issues("number", math.inf) == [
        Issue((), "Invalid input: expected number, received number")
    ]
    assert check("authenticate", {"methodId": []}) == one(
        "methodId", "Invalid input: expected string, received array"
    )
    # Only a key the schema does not catch: `_meta` and capabilities are caught.
    assert check("initialize", {"protocolVersion": 1, "_meta": []}) is None
    link = {"type": "resource_link", "name": "n", "uri": "u", "size": True}
    assert check("session/prompt", {"sessionId": "s", "prompt": [link]}) is None


def test_the_safe_integer_edge() -> None:
    edge = 2**53 - 1
    assert issues(("int", None, None), edge) == []
    assert issues(("int", None, None), edge + 1) == [
        Issue((), f"Too big: expected int to be <={edge}", fatal=False)
    ]
    assert issues(("int", None, None), -edge) == []
    assert issues(("int", None, None), -edge - 1) == [
        Issue((), f"Too small: expected int to be >=-{edge}", fatal=False)
    ]


def test_presence_rules() -> None:
    node = ("object", (("a", "string", "nullable"), ("b", "string", "nullish")))
    assert issues(node, {"a": None}) == []
    assert issues(node, {"a": None, "b": None}) == []
    assert issues(node, {}) == [Issue(("a",), "Invalid input: expected string, received undefined")]


def test_a_union_two_options_accept_passes() -> None:
    assert issues(("union", ("string", "string")), "x") == []
    assert issues(("union", ("string", ("literal", "x"))), "x") == []


def test_array_indices_order_as_numbers() -> None:
    data = check("session/prompt", {"sessionId": "s", "prompt": [5] * 11})
    assert data is not None
    assert list(data["prompt"]) == [str(i) for i in range(11)] + ["_errors"]


def test_parse_raises_the_sdk_error_and_unknown_methods_pass() -> None:
    with pytest.raises(RpcError) as raised:
        schema_check.parse("session/cancel", {})
    assert raised.value.to_json() == {
        "code": -32602,
        "message": "Invalid params",
        "data": one("sessionId", "Invalid input: expected string, received undefined"),
    }
    assert schema_check.parse("session/cancel", {"sessionId": "s"}) == {"sessionId": "s"}
    assert check("_session/steering", 5) is None
    assert schema_check.parse("_session/steering", 5) == 5


def test_parsed_type() -> None:
    values = [UNDEFINED, None, True, 0, 0.5, math.nan, "", [], {}]
    names = ["undefined", "null", "boolean", "number", "number", "nan", "string", "array", "object"]
    assert [parsed_type(v) for v in values] == names


def test_the_table_is_what_the_generator_gives_for_the_pinned_schema() -> None:
    methods, table = schema_gen.build(load_schema(fetch()))
    assert methods == schema_table.METHODS
    assert table == schema_table.DEFS
    assert set(methods) == set(schema_gen.METHODS)


# -- properties ------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


def valid(node: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values a table node accepts (required keys always, optional ones sometimes)."""
    if isinstance(node, str):
        if node.startswith("#"):
            return st.deferred(lambda: valid(schema_table.DEFS[node[1:]], depth + 1))
        leaves: dict[str, st.SearchStrategy[Any]] = {
            "string": st.text(max_size=4),
            "boolean": st.booleans(),
            "number": st.integers() | st.floats(allow_nan=False, allow_infinity=False),
            "record": st.dictionaries(st.text(max_size=3), json_values, max_size=2),
            "unknown": json_values,
        }
        return leaves[node]
    kind = node[0]
    if kind == "int":
        return st.integers(node[1], node[2])
    if kind in ("literal",):
        return st.just(node[1])
    if kind == "enum":
        return st.sampled_from(node[1])
    if kind in ("array", "skip"):
        return st.lists(valid(node[1], depth + 1), max_size=0 if depth > 4 else 2)
    if kind == "union":
        return st.one_of([valid(option, depth + 1) for option in node[1]])
    if kind == "and":
        return st.tuples(valid(node[1], depth + 1), valid(node[2], depth + 1)).map(
            lambda pair: {**pair[0], **pair[1]}
        )
    return _valid_object(node[1], depth)


def _valid_object(properties: Any, depth: int) -> st.SearchStrategy[dict[str, Any]]:
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for key, node, presence, *rest in properties:
        # A caught key takes any JSON value; a required one must still be present.
        value = json_values if rest and "catch" in rest[0] else valid(node, depth + 1)
        (required if presence in ("required", "nullable") else optional)[key] = value
    return st.fixed_dictionaries(required, optional=optional if depth < 3 else {})


@pytest.mark.parametrize("method", sorted(schema_table.METHODS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_valid_params_pass_and_a_missing_required_key_is_named(method: str, data: Any) -> None:
    node = schema_table.DEFS[schema_table.METHODS[method]]
    params = data.draw(valid(node))
    assert check(method, params) is None
    if node[0] == "object":
        required = [(k, rest) for k, _, p, *rest in node[1] if p == "required"]
        if required:
            key, rest = data.draw(st.sampled_from(required))
            del params[key]
            found = check(method, params)
            assert found is not None and key in found
            if rest and "catch" in rest[0]:
                assert found[key]["_errors"] == ["Required value is missing"]
            else:
                assert all(m.endswith("received undefined") for m in found[key]["_errors"])


@settings(max_examples=150, deadline=None)
@given(method=st.sampled_from(sorted(schema_table.METHODS)), params=json_values)
def test_any_json_gets_none_or_a_format_tree(method: str, params: Any) -> None:
    found = check(method, params)
    if found is None:
        return
    assert found["_errors"] or len(found) > 1  # a failure always says something

    def walk(tree: dict[str, Any]) -> None:
        assert isinstance(tree["_errors"], list)
        assert all(isinstance(m, str) and m for m in tree["_errors"])
        for key, sub in tree.items():
            if key != "_errors":
                walk(sub)

    walk(found)
    json.dumps(found)  # JSON data, nothing else
