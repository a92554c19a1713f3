"""The stdio MCP bridge as a resource server: a scenario's `mcp_resources`, served as
declared (pages, contents, refusals), and no resources capability without them."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from parity.fakellm.mcp_resources import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    ResourceError,
    page,
    read,
)
from parity.fakellm.server import FakeLLM
from parity.scenario.load import load_scenario
from parity.scenario.model import DEFAULT_CATALOG
from tests.fakellm.test_mcp import session

DECLARED: dict[str, Any] = {
    "page_size": 2,
    "resources": [
        {"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"},
        {"uri": "file:///b.png", "name": "b"},
        {"uri": "mem://c", "name": "c"},
    ],
    "templates": [{"uriTemplate": "file:///{path}", "name": "files"}],
    "contents": {
        "file:///a.txt": [{"uri": "file:///a.txt", "text": "hello"}],
        "file:///b.png": [{"uri": "file:///b.png", "blob": "iVBORw=="}],
    },
}


def test_pages_follow_the_offset_cursor() -> None:
    items = ["a", "b", "c"]
    assert page(items, None, 2) == (["a", "b"], "2")
    assert page(items, "2", 2) == (["c"], None)
    assert page(items, "0", 2) == (["a", "b"], "2")
    assert page(items, None, None) == (["a", "b", "c"], None)
    assert page(items, "1", None) == (["b", "c"], None)


@pytest.mark.parametrize("cursor", ["x", "-1", "4", ""])
def test_a_cursor_no_listing_gave_out_is_refused(cursor: str) -> None:
    with pytest.raises(ResourceError) as caught:
        page(["a", "b", "c"], cursor, 2)
    assert (caught.value.code, caught.value.message) == (
        INVALID_PARAMS,
        f"Invalid cursor: {cursor}",
    )


def test_read_answers_the_declared_contents_or_not_found() -> None:
    assert read(DECLARED, "file:///a.txt") == [{"uri": "file:///a.txt", "text": "hello"}]
    with pytest.raises(ResourceError) as caught:
        read(DECLARED, "mem://c")  # listed, but no contents declared
    assert (caught.value.code, caught.value.message) == (
        RESOURCE_NOT_FOUND,
        "Resource not found: mem://c",
    )


def _run(fake: FakeLLM, run_id: str, resources: dict[str, Any] | None) -> Any:
    catalog = dict(DEFAULT_CATALOG)
    if resources is not None:
        catalog["mcpResources"] = resources
    return fake.open_run(run_id, llm=[], tools=[], catalog=catalog)


async def test_the_bridge_serves_declared_resources(fake: FakeLLM) -> None:
    run = _run(fake, "res-1", DECLARED)
    async with session(run) as client:
        first = await client.list_resources()
        second = await client.list_resources(
            params=types.PaginatedRequestParams(cursor=first.next_cursor)
        )
        templates = await client.list_resource_templates()
        text = await client.read_resource("file:///a.txt")
        blob = await client.read_resource("file:///b.png")
        with pytest.raises(MCPError) as missing:
            await client.read_resource("file:///none")
        with pytest.raises(MCPError) as bad_cursor:
            await client.list_resources(params=types.PaginatedRequestParams(cursor="zz"))
    assert [r.name for r in first.resources] == ["a", "b"] and first.next_cursor == "2"
    assert [r.name for r in second.resources] == ["c"] and second.next_cursor is None
    assert [t.uri_template for t in templates.resource_templates] == ["file:///{path}"]
    assert text.model_dump(by_alias=True, exclude_unset=True)["contents"] == [
        {"uri": "file:///a.txt", "text": "hello"}
    ]
    assert blob.model_dump(by_alias=True, exclude_unset=True)["contents"] == [
        {"uri": "file:///b.png", "blob": "iVBORw=="}
    ]
    assert (missing.value.code, str(missing.value)) == (-32002, "Resource not found: file:///none")
    assert (bad_cursor.value.code, str(bad_cursor.value)) == (-32602, "Invalid cursor: zz")
    # Resource requests are the bridge's own: nothing reaches the fake's recording.
    assert [r.path for r in run.requests] == []


async def test_without_resources_the_bridge_declares_no_resources_capability(
    fake: FakeLLM,
) -> None:
    async with session(_run(fake, "res-2", None)) as client:
        assert client.server_capabilities is not None
        assert client.server_capabilities.resources is None
    async with session(_run(fake, "res-3", DECLARED)) as client:
        assert client.server_capabilities is not None
        assert client.server_capabilities.resources is not None


def test_a_scenario_declares_resources_for_the_fake_catalog(tmp_path: Any) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "description: d\n"
        "mcp_resources: {resources: [{uri: 'mem://x', name: x}], page_size: 1}\n"
        "steps: [{initialize: {}}]\n"
    )
    scenario = load_scenario(path)
    assert scenario.fake_catalog["mcpResources"] == {
        "resources": [{"uri": "mem://x", "name": "x"}],
        "page_size": 1,
    }
    assert scenario.fake_catalog["providers"] == scenario.catalog["providers"]
    path.write_text("description: d\nsteps: [{initialize: {}}]\n")
    assert "mcpResources" not in load_scenario(path).fake_catalog
