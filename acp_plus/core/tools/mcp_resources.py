"""Native 0.2.1-rc.2's MCP resource tools: `list_mcp_resources`,
`list_mcp_resource_templates`, `read_mcp_resource`, shared by a session's MCP servers.

Native mounts them (its `mcp-resources` row, on whatever built-in families run) as soon
as a session has an MCP server, with a system-prompt section naming every server of the
session, whether or not the server declares the resources capability. The model names a
server by its (normalized) name; the answer is the server's result as native's MCP client
parses it, as one JSON text after a `MCP server: <name>` line, every `blob` replaced by
its length (`render`). Nothing is asked: reading a mounted server's resources is the
client's choice of server, as calling its tools is.

Native's client shows through in the result's layout: known keys in its schema's order,
the nested objects' unknown keys dropped, the result's own kept after them
(`ordered_result`); a call without a cursor walks every page (at most 64) into one
result without `nextCursor`; a server without the resources capability lists nothing
(and is asked to read all the same). The tools' texts and the walk are pure; the
requests go through `core/tools/mcp.py`'s connections.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from acp_plus.core.js_json import js_json
from acp_plus.core.tools.arg_check import arguments_error
from acp_plus.core.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from acp_plus.core.tools.mcp import McpConnection

SERVER = {"type": "string", "description": "Configured MCP server name."}
CURSOR = {"type": "string", "description": "Continuation cursor returned by this server."}
LIST_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"server": SERVER, "cursor": CURSOR},
    "required": ["server"],
}
READ_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": SERVER,
        "uri": {"type": "string", "description": "Resource URI to read."},
    },
    "required": ["server", "uri"],
}

MAX_PAGES = 64
"""Native's MCP client walks at most this many pages of a listing without a cursor."""


def section(servers: Sequence[str]) -> str:
    """The system-prompt section naming a session's MCP servers ("" for none): native
    places it with the MCP server sections, after every tool family's guidance."""
    if not servers:
        return ""
    names = sorted(servers, key=_utf16_key)
    return (
        "## MCP resource servers\n\n"
        "Use list_mcp_resources, list_mcp_resource_templates, or read_mcp_resource with "
        f"one of these names as the server argument: {js_json(names)}."
    )


def _utf16_key(name: str) -> bytes:
    return name.encode("utf-16-be", "surrogatepass")


def prompt_sections(instructions: Mapping[str, str]) -> tuple[str, ...]:
    """The system-prompt sections of a session's MCP servers (name -> its instructions,
    "" for none), after every tool family's guidance: the resource servers section, then
    `### MCP server: <name>` with each server's instructions, by name (native sorts its
    sections of one rank by name: `mcp-resource-servers`, then each `mcp:<name>`)."""
    named = sorted(instructions, key=_utf16_key)
    servers = tuple(
        f"### MCP server: {name}\n\n{instructions[name]}" for name in named if instructions[name]
    )
    head = section(named)
    return (head, *servers) if head else servers


def unavailable(server: str) -> str:
    """Native's refusal of a server the session does not have."""
    return f'MCP resource server "{server}" is unavailable in this agent\'s scope'


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _blobs_described(value: Any) -> Any:
    # Native's JSON.stringify replacer: any object key `blob` holding a string.
    if isinstance(value, Mapping):
        return {
            key: (
                f"[binary resource: {_utf16_length(item)} base64 characters; available "
                "to programmatic callers]"
                if key == "blob" and isinstance(item, str)
                else _blobs_described(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_blobs_described(item) for item in value]
    return value


def render(server: str, value: Mapping[str, Any]) -> str:
    """What the model reads of a result: the server as the model named it, then the
    result as JSON with every binary payload described instead of included."""
    return f"MCP server: {server}\n{js_json(_blobs_described(value))}"


# Native's MCP client parses results with its schemas: an object's known keys come out
# in the schema's order, a nested object's unknown keys are dropped, the result's own
# unknown keys follow its known ones.
_ICON = ("src", "mimeType", "sizes", "theme")
_ANNOTATIONS = ("audience", "priority", "lastModified")
_ENTRY_KEYS = {
    "resources": ("name", "title", "icons", "uri", "description", "mimeType", "size"),
    "resourceTemplates": ("name", "title", "icons", "uriTemplate", "description", "mimeType"),
    "contents": ("uri", "mimeType", "_meta"),
}


def _known(value: Any, keys: Sequence[str]) -> dict[str, Any]:
    source = value if isinstance(value, Mapping) else {}
    return {key: source[key] for key in keys if key in source}


def _entry(kind: str, value: Any) -> dict[str, Any]:
    out = _known(value, _ENTRY_KEYS[kind])
    if kind == "contents":  # text, else blob: the union tries the text shape first
        body = _known(value, ("text",)) or _known(value, ("blob",))
        return out | body
    if isinstance(out.get("icons"), list):
        out["icons"] = [_known(icon, _ICON) for icon in out["icons"]]
    rest = _known(value, ("annotations", "_meta"))
    if "annotations" in rest:
        rest["annotations"] = _known(rest["annotations"], _ANNOTATIONS)
    return out | rest


def ordered_result(raw: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """A result as native's client hands it over, from the keys the server sent:
    `_meta`, then a current protocol's `ttlMs` and `cacheScope` and the items before
    `nextCursor`, or an older one's `nextCursor` before the items; `resultType` is
    the client's alone; the result's unknown keys last."""
    head = ("_meta", "ttlMs", "cacheScope") if "ttlMs" in raw else ("_meta", "nextCursor")
    out = _known(raw, head)
    if kind in raw:
        out[kind] = [_entry(kind, item) for item in raw[kind] or []]
    out |= _known(raw, ("nextCursor",))
    skip = {*head, kind, "nextCursor", "resultType"}
    out |= {key: item for key, item in raw.items() if key not in skip}
    return out


class ResourceError(Exception):
    """A resource request that fails the call; the message is what the model reads."""


class _ResourceTool:
    """One of the three tools over the session's MCP servers (by normalized name)."""

    name = ""
    description = ""
    parameters: dict[str, Any] = LIST_PARAMETERS
    cancelled_text = "Error: [object Object]"
    """A cancelled request rejects with the turn's abort reason, as an MCP tool call's
    does (`McpTool.cancelled_text`)."""
    session_only = True
    """Over the session's own MCP servers: a child agent does not get it."""

    def __init__(self, servers: Mapping[str, McpConnection]):
        self._servers = servers

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Reading a mounted server runs directly, as its tools do."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Check the arguments, find the server, ask it; any failure is the call's."""
        problem = arguments_error(self.parameters, args)
        if problem is not None:
            return ToolResult.text(f"Error: {problem}", is_error=True)
        server = str(args["server"])
        connection = self._servers.get(server)
        try:
            if connection is None:
                raise ResourceError(unavailable(server))
            value = await self.request(connection, args)
        except Exception as exc:  # the server's error, or the client's: its message
            return ToolResult.text(f"Error: {exc}", is_error=True)
        return ToolResult.text(render(server, value))

    async def request(self, connection: McpConnection, args: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError


class _ListTool(_ResourceTool):
    kind = "resources"

    async def request(self, connection: McpConnection, args: dict[str, Any]) -> dict[str, Any]:
        if not connection.has_resources:
            return {self.kind: []}
        cursor = args.get("cursor")
        if cursor is not None:
            return ordered_result(await connection.resources(self.kind, cursor), self.kind)
        return ordered_result(await walk(connection, self.kind), self.kind)


class ListResources(_ListTool):
    """`list_mcp_resources`."""

    name = "list_mcp_resources"
    description = "List resources available from an MCP server."


class ListResourceTemplates(_ListTool):
    """`list_mcp_resource_templates`."""

    name = "list_mcp_resource_templates"
    description = "List parameterized resource URI templates from an MCP server."
    kind = "resourceTemplates"


class ReadResource(_ResourceTool):
    """`read_mcp_resource`."""

    name = "read_mcp_resource"
    description = (
        "Read an MCP resource by URI from the named server. Use a listed URI or an "
        "expanded resource template."
    )
    parameters = READ_PARAMETERS

    async def request(self, connection: McpConnection, args: dict[str, Any]) -> dict[str, Any]:
        return ordered_result(await connection.read_resource(str(args["uri"])), "contents")


_METHODS = {"resources": "resources/list", "resourceTemplates": "resources/templates/list"}


async def walk(connection: McpConnection, kind: str) -> dict[str, Any]:
    """Every page of a listing as one result, as native's client aggregates them: the
    first page's result with the later pages' items, no `nextCursor`. A page that
    repeats the last one's cursor and items ends the walk; more than `MAX_PAGES` pages
    is an error."""
    first = dict(await connection.resources(kind, None))
    items = list(first.get(kind) or [])
    previous, cursor, pages = items, first.get("nextCursor"), 1
    while cursor is not None:
        if pages >= MAX_PAGES:
            raise ResourceError(
                f"{_METHODS[kind]}: exceeded listMaxPages ({MAX_PAGES}); server pagination "
                "did not terminate"
            )
        page = await connection.resources(kind, cursor)
        found = list(page.get(kind) or [])
        if page.get("nextCursor") == cursor and found == previous:
            break
        items.extend(found)
        previous, cursor, pages = found, page.get("nextCursor"), pages + 1
    first[kind] = items
    first.pop("nextCursor", None)
    return first


def resource_tools(servers: Mapping[str, McpConnection]) -> list[Any]:
    """The three tools over a session's servers (none without a server)."""
    if not servers:
        return []
    return [ListResources(servers), ListResourceTemplates(servers), ReadResource(servers)]
