"""MCP resources for the fixture bridge: a scenario's `mcp_resources`, served as declared.

`mcp_resources` (docs/scenarios.md) lists `resources` and `templates` (MCP `Resource` and
`ResourceTemplate` objects in wire form, camelCase), the `contents` each readable URI
answers `resources/read` with, and an optional `page_size` that splits both lists into
pages (the cursor is the next page's offset, as text). What an agent makes of them is
what the scenarios compare: nothing here is recorded by the fake.

`page` and `read` are pure; `resource_handlers` wraps them in the official SDK's
low-level handlers (`mcp_stdio.fixture_server` passes them to its `Server`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

RESOURCE_NOT_FOUND = -32002
"""MCP's error code for a URI the server does not have (the specification's)."""
INVALID_PARAMS = -32602


class ResourceError(Exception):
    """A request the fixture refuses: a JSON-RPC error `code` and `message`."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def page(
    items: Sequence[Any], cursor: str | None, size: int | None
) -> tuple[list[Any], str | None]:
    """One page of `items` from `cursor` (None: the first), and the next page's cursor
    (None after the last). Without `size` everything is one page; a cursor that is no
    offset this listing gave out is refused."""
    start = 0
    if cursor is not None:
        if not cursor.isdigit() or int(cursor) > len(items):
            raise ResourceError(INVALID_PARAMS, f"Invalid cursor: {cursor}")
        start = int(cursor)
    if size is None:
        return list(items[start:]), None
    end = start + size
    return list(items[start:end]), (str(end) if end < len(items) else None)


def read(declared: Mapping[str, Any], uri: str) -> list[Any]:
    """The contents a URI reads as (`contents[uri]`), or MCP's resource-not-found error."""
    contents = declared.get("contents") or {}
    if uri not in contents:
        raise ResourceError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
    return list(contents[uri])


def resource_handlers(declared: Mapping[str, Any]) -> dict[str, Any]:
    """The SDK `Server` keyword arguments that serve `declared` (`on_list_resources`,
    `on_list_resource_templates`, `on_read_resource`); registering them is what makes
    the server declare the resources capability."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    size = declared.get("page_size")

    def listing(key: str, params: Any) -> tuple[list[Any], str | None]:
        cursor = getattr(params, "cursor", None) if params is not None else None
        try:
            return page(declared.get(key) or [], cursor, size)
        except ResourceError as exc:
            raise MCPError(exc.code, exc.message) from None

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        items, after = listing("resources", params)
        return types.ListResourcesResult.model_validate(
            {"resources": items, **({"nextCursor": after} if after else {})}
        )

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        items, after = listing("templates", params)
        return types.ListResourceTemplatesResult.model_validate(
            {"resourceTemplates": items, **({"nextCursor": after} if after else {})}
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            contents = read(declared, str(params.uri))
        except ResourceError as exc:
            raise MCPError(exc.code, exc.message) from None
        return types.ReadResourceResult.model_validate({"contents": contents})

    return {
        "on_list_resources": list_resources,
        "on_list_resource_templates": list_templates,
        "on_read_resource": read_resource,
    }
