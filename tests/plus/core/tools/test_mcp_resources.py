"""Native 0.2.1-rc.2's MCP resource tools (`acp_plus/core/tools/mcp_resources.py`): the
prompt sections, the result's layout and text, the page walk, and each tool's refusals,
over a stand-in connection (the real one is `tests/plus/test_mcp_sessions.py`'s)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_plus.core.tools.base import ToolContext, cancelled_text
from acp_plus.core.tools.mcp_resources import (
    LIST_PARAMETERS,
    MAX_PAGES,
    READ_PARAMETERS,
    ListResources,
    ListResourceTemplates,
    ReadResource,
    ResourceError,
    ordered_result,
    prompt_sections,
    render,
    resource_tools,
    section,
    walk,
)

CTX = ToolContext(session_id="s", cwd=Path("/"), call_id="c", turn=1)


class Connection:
    """A stand-in `McpConnection`: pages by cursor, reads by URI, every request noted."""

    def __init__(
        self,
        pages: dict[str | None, dict[str, Any]] | None = None,
        reads: dict[str, dict[str, Any]] | None = None,
        has_resources: bool = True,
    ) -> None:
        self.pages = pages or {}
        self.reads = reads or {}
        self.has_resources = has_resources
        self.asked: list[tuple[str, str | None]] = []

    async def resources(self, kind: str, cursor: str | None) -> dict[str, Any]:
        self.asked.append((kind, cursor))
        return dict(self.pages[cursor])

    async def read_resource(self, uri: str) -> dict[str, Any]:
        self.asked.append(("read", uri))
        if uri not in self.reads:
            raise RuntimeError(f"Resource not found: {uri}")  # the SDK's error: its message
        return self.reads[uri]


def text(result: Any) -> str:
    (block,) = result.content
    assert block["type"] == "text"
    return str(block["text"])


def test_the_tools_are_natives_definitions() -> None:
    tools = resource_tools({"a": Connection()})  # type: ignore[dict-item]
    assert [(t.name, t.description) for t in tools] == [
        ("list_mcp_resources", "List resources available from an MCP server."),
        (
            "list_mcp_resource_templates",
            "List parameterized resource URI templates from an MCP server.",
        ),
        (
            "read_mcp_resource",
            "Read an MCP resource by URI from the named server. Use a listed URI or an "
            "expanded resource template.",
        ),
    ]
    assert [t.parameters for t in tools] == [LIST_PARAMETERS, LIST_PARAMETERS, READ_PARAMETERS]
    assert READ_PARAMETERS["required"] == ["server", "uri"]
    assert all(t.approval_reason({}, CTX) is None for t in tools)
    # Cancelled while its request runs: the request rejects with the turn's abort reason.
    assert {cancelled_text(t) for t in tools} == {"Error: [object Object]"}
    assert resource_tools({}) == []


def test_the_prompt_sections_name_every_server_then_each_servers_instructions() -> None:
    assert section([]) == ""
    assert prompt_sections({}) == ()
    got = prompt_sections({"zeta": "", "Docs": "Use the docs.", "alpha": "Alpha says hi."})
    assert got == (
        "## MCP resource servers\n\nUse list_mcp_resources, list_mcp_resource_templates, or "
        'read_mcp_resource with one of these names as the server argument: ["Docs","alpha",'
        '"zeta"].',
        "### MCP server: Docs\n\nUse the docs.",
        "### MCP server: alpha\n\nAlpha says hi.",
    )


def test_render_names_the_server_and_describes_every_blob() -> None:
    value = {
        "contents": [
            {"uri": "u", "blob": "QUJD"},
            {"uri": "v", "text": "blob", "_meta": {"blob": "\U0001f600x", "n": {"blob": 5}}},
        ]
    }
    assert render("srv", value) == (
        'MCP server: srv\n{"contents":[{"uri":"u","blob":"[binary resource: 4 base64 '
        'characters; available to programmatic callers]"},{"uri":"v","text":"blob","_meta":'
        '{"blob":"[binary resource: 3 base64 characters; available to programmatic '
        'callers]","n":{"blob":5}}}]}'
    )


def test_a_current_protocols_result_keeps_natives_key_order() -> None:
    raw = {
        "_meta": {"k": 1},
        "ttlMs": 0,
        "cacheScope": "private",
        "nextCursor": "2",
        "resources": [
            {
                "uri": "u",
                "mimeType": "text/plain",
                "icons": [{"theme": "dark", "src": "i.png", "x": 1}],
                "name": "n",
                "annotations": {"priority": 0.5, "audience": ["user"], "y": 2},
                "unknown": True,
                "title": "T",
            }
        ],
        "resultType": "complete",
        "extra": 1,
    }
    assert list(ordered_result(raw, "resources").items()) == [
        ("_meta", {"k": 1}),
        ("ttlMs", 0),
        ("cacheScope", "private"),
        (
            "resources",
            [
                {
                    "name": "n",
                    "title": "T",
                    "icons": [{"src": "i.png", "theme": "dark"}],
                    "uri": "u",
                    "mimeType": "text/plain",
                    "annotations": {"audience": ["user"], "priority": 0.5},
                }
            ],
        ),
        ("nextCursor", "2"),
        ("extra", 1),
    ]


def test_an_older_protocols_result_puts_the_cursor_first() -> None:
    raw = {"resourceTemplates": [{"uriTemplate": "t/{x}", "name": "t"}], "nextCursor": "zz"}
    assert list(ordered_result(raw, "resourceTemplates")) == ["nextCursor", "resourceTemplates"]
    contents = {
        "contents": [
            {"text": "hi", "_meta": {"a": 1}, "uri": "u", "blob": "QQ=="},
            {"blob": "QQ==", "uri": "v", "mimeType": "image/png"},
        ]
    }
    assert ordered_result(contents, "contents")["contents"] == [
        {"uri": "u", "_meta": {"a": 1}, "text": "hi"},
        {"uri": "v", "mimeType": "image/png", "blob": "QQ=="},
    ]


async def test_a_walk_joins_every_page_into_the_first() -> None:
    pages: dict[str | None, dict[str, Any]] = {
        None: {"ttlMs": 0, "resources": [{"name": "a"}], "nextCursor": "1"},
        "1": {"ttlMs": 9, "resources": [{"name": "b"}], "nextCursor": "2"},
        "2": {"resources": [{"name": "c"}]},
    }
    conn = Connection(pages)
    got = await walk(conn, "resources")  # type: ignore[arg-type]
    assert got == {"ttlMs": 0, "resources": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}
    assert conn.asked == [("resources", None), ("resources", "1"), ("resources", "2")]


async def test_a_walk_stops_at_a_page_that_repeats_itself() -> None:
    stuck = {"resources": [{"name": "a"}], "nextCursor": "zz"}
    conn = Connection({None: stuck, "zz": stuck})
    got = await walk(conn, "resources")  # type: ignore[arg-type]
    assert got == {"resources": [{"name": "a"}]}
    assert len(conn.asked) == 2


async def test_a_walk_past_natives_page_limit_fails() -> None:
    endless = {
        None if i == 0 else str(i): {"resources": [{"name": str(i)}], "nextCursor": str(i + 1)}
        for i in range(MAX_PAGES + 1)
    }
    with pytest.raises(ResourceError) as caught:
        await walk(Connection(endless), "resourceTemplates")  # type: ignore[arg-type]
    assert str(caught.value) == (
        "resources/templates/list: exceeded listMaxPages (64); server pagination did not terminate"
    )


async def test_list_walks_without_a_cursor_and_asks_one_page_with_one() -> None:
    pages: dict[str | None, dict[str, Any]] = {
        None: {"resources": [{"name": "a", "uri": "u"}], "nextCursor": "p2"},
        "p2": {"resources": [{"name": "b", "uri": "v"}]},
        "": {"resources": [], "nextCursor": "p2"},
    }
    conn = Connection(pages)
    tool = ListResources({"srv": conn})  # type: ignore[dict-item]
    whole = await tool.run({"server": "srv"}, CTX)
    assert text(whole) == (
        'MCP server: srv\n{"resources":[{"name":"a","uri":"u"},{"name":"b","uri":"v"}]}'
    )
    one = await tool.run({"server": "srv", "cursor": ""}, CTX)
    assert text(one) == 'MCP server: srv\n{"nextCursor":"p2","resources":[]}'
    assert conn.asked[-1] == ("resources", "")


async def test_a_server_without_the_resources_capability_lists_nothing_but_is_read() -> None:
    conn = Connection(reads={}, has_resources=False)
    servers = {"bare": conn}
    listed = await ListResources(servers).run({"server": "bare"}, CTX)  # type: ignore[arg-type]
    templates = await ListResourceTemplates(servers).run({"server": "bare"}, CTX)  # type: ignore[arg-type]
    assert (text(listed), listed.is_error) == ('MCP server: bare\n{"resources":[]}', False)
    assert text(templates) == 'MCP server: bare\n{"resourceTemplates":[]}'
    read = await ReadResource(servers).run({"server": "bare", "uri": "x:y"}, CTX)  # type: ignore[arg-type]
    assert (text(read), read.is_error) == ("Error: Resource not found: x:y", True)
    assert conn.asked == [("read", "x:y")]


async def test_refusals_are_natives_texts() -> None:
    conn = Connection()
    servers = {"srv": conn}
    read = ReadResource(servers)  # type: ignore[arg-type]
    listing = ListResources(servers)  # type: ignore[arg-type]
    cases: list[tuple[Any, dict[str, Any], str]] = [
        (listing, {"server": "nope"}, 'Error: MCP resource server "nope" is unavailable in '
         "this agent's scope"),
        (read, {"server": "srv"}, 'Error: invalid arguments: missing required property "uri"'),
        (listing, {}, 'Error: invalid arguments: missing required property "server"'),
        (listing, {"server": "srv", "cursor": 5}, 'Error: invalid arguments: "cursor" must be a '
         "string"),
    ]  # fmt: skip
    for tool, args, expected in cases:
        result = await tool.run(args, CTX)
        assert (text(result), result.is_error) == (expected, True)
    assert conn.asked == []  # nothing reached a server


SNAPSHOT = Path(__file__).parents[4] / "snapshots" / "tools" / "mcp-resource-servers"


def test_the_definitions_and_sections_are_natives_as_recorded() -> None:
    """Read from native's recording, never from a copy written here."""
    from parity.view.dump import load_view

    view = load_view((SNAPSHOT / "native.yaml").read_text(encoding="utf-8"))
    body = next(r["body"] for r in view["model"] if r.get("body") and "tools" in r["body"])
    shown = {t["name"]: t for t in body["tools"]}
    for tool in resource_tools({"Zeta": Connection()}):  # type: ignore[dict-item]
        assert shown[tool.name] == {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }
    sections = prompt_sections({"parity": "", "Zeta": "Zeta serves the project's docs."})
    assert body["system"].endswith("\n\n" + "\n\n".join(sections))
