"""MCP tools from `session/new.mcpServers`, through the official `mcp` client (stdio, HTTP).

Each server gets one `McpConnection`, owned by a dedicated task: the SDK's client is an
anyio context whose enter and exit must happen in the same task, while tool calls come
from the turn's task. Its tools appear to the model as `mcp__<server>__<tool>`, where
`<server>` is the name `acp_plus.protocol.mcp_config` normalized (§1.4). A server that fails to
start raises `McpStartError` (the contract's `failOnStartupError`), and so does one that
has not answered `initialize` and `tools/list` within the startup timeout (config
`mcp_startup_timeout`): a server that never answers cannot hold `session/new` forever.
Cancelling a start stops the server at once; the SDK then closes its stdin, waits its
2 s grace and kills the server's process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp_plus.core.js_json import JS_WHITESPACE, js_text, node_utf8
from acp_plus.core.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from mcp import Client

log = logging.getLogger(__name__)


# What `protocol/mcp_config.py` makes of a validated `mcpServers` entry (§1.4).
@dataclass(frozen=True)
class StdioServer:
    """A stdio MCP server; it runs with `cwd` set to the session cwd."""

    name: str
    source_name: str
    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    cwd: str


@dataclass(frozen=True)
class HttpServer:
    """A streamable-HTTP MCP server."""

    name: str
    source_name: str
    url: str
    headers: tuple[tuple[str, str], ...]


McpServerSpec = StdioServer | HttpServer

START_TIMEOUT = 30.0
"""Seconds a server gets to answer `initialize` and list its tools (the config default)."""

# Importing the SDK costs one to three seconds of CPU (its pydantic models); it is done
# off the event loop so that other sessions keep being served meanwhile.
_SDK_MODULES = ("mcp", "mcp.client.stdio", "mcp.client.streamable_http", "mcp.shared._httpx_utils")
_sdk_lock = threading.Lock()
_sdk_thread: threading.Thread | None = None


def _import_sdk() -> None:
    for name in _SDK_MODULES:
        importlib.import_module(name)


def prewarm() -> None:
    """Start importing the MCP SDK in a daemon thread (idempotent, returns at once).

    Call it once the server is up (after the `initialize` response, say) so the first
    `session/new` with MCP servers does not pay for the import.
    """
    global _sdk_thread
    with _sdk_lock:
        if _sdk_thread is None:
            _sdk_thread = threading.Thread(target=_import_sdk, name="mcp-sdk-import", daemon=True)
            _sdk_thread.start()


async def load_sdk() -> None:
    """Make sure the SDK is imported, without blocking the event loop."""
    await asyncio.to_thread(_import_sdk)


class McpStartError(Exception):
    """An MCP server could not be started or listed."""


def tool_name(server: str, tool: str) -> str:
    """The name the model calls an MCP tool by."""
    return f"mcp__{server}__{tool}"


def convert_content(blocks: list[Any]) -> list[dict[str, Any]]:
    """MCP content blocks -> tool result blocks (text and images kept, others as text)."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            out.append({"type": "text", "text": block.text})
        elif kind == "image":
            out.append({"type": "image", "mimeType": block.mime_type, "data": block.data})
        else:
            dump = block.model_dump_json(by_alias=True, exclude_none=True)
            out.append({"type": "text", "text": dump})
    return out


class McpConnection:
    """A running MCP client session for one configured server."""

    def __init__(self, spec: McpServerSpec, start_timeout: float = START_TIMEOUT):
        self.spec = spec
        self._start_timeout = start_timeout
        self._client: Client | None = None
        self._tools: list[Any] = []
        self.has_resources = False
        """Whether the server declared the resources capability at `initialize`."""
        self.instructions = ""
        """The server's instructions, trailing whitespace cut as JavaScript's `trimEnd`
        cuts it ("" for none)."""
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ready = False

    @property
    def name(self) -> str:
        """The normalized server name."""
        return self.spec.name

    def _target(self) -> Any:
        if isinstance(self.spec, StdioServer):
            from mcp.client.stdio import StdioServerParameters

            return StdioServerParameters(
                command=self.spec.command,
                args=list(self.spec.args),
                env=dict(self.spec.env) or None,
                cwd=self.spec.cwd,
            )
        assert isinstance(self.spec, HttpServer)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        http = create_mcp_http_client(headers=dict(self.spec.headers))
        return streamable_http_client(self.spec.url, http_client=http)

    async def start(self) -> None:
        """Connect and list the tools; raise `McpStartError` naming the server on failure."""
        await load_sdk()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._own(ready), name=f"mcp:{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self._start_timeout)
        except BaseException as exc:
            await self.aclose()
            if isinstance(exc, asyncio.CancelledError):
                raise
            detail = (
                f"no answer within {self._start_timeout:g} s (mcp_startup_timeout)"
                if isinstance(exc, TimeoutError)
                else _describe(exc)
            )
            raise McpStartError(
                f"MCP server {self.spec.source_name} failed to start: {detail}"
            ) from exc

    async def _own(self, ready: asyncio.Future[None]) -> None:
        from mcp import Client

        try:
            async with Client(self._target()) as client:
                tools: list[Any] = []
                cursor: str | None = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
                instructions = js_text(client.instructions or "").rstrip(JS_WHITESPACE)
                check_instructions(self.name, instructions)
                self._client, self._tools = client, tools
                self.has_resources = client.server_capabilities.resources is not None
                self.instructions = instructions
                self._ready = True
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                if isinstance(exc, asyncio.CancelledError):
                    ready.cancel()  # stopped while starting: `start` is already gone
                else:
                    ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                log.warning("MCP server %s stopped: %s", self.name, _describe(exc))
        finally:
            self._client = None

    def tools(self) -> list[McpTool]:
        """The server's tools as registry tools."""
        return [McpTool(self, t) for t in self._tools]

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call a tool; a server-reported error is a failed result, not an exception."""
        client = self._client
        if client is None:
            return ToolResult.text(f"MCP server {self.name} is not running", is_error=True)
        result = await client.call_tool(tool, arguments)
        return ToolResult(convert_content(list(result.content)), bool(result.is_error))

    def _connected(self) -> Client:
        client = self._client
        if client is None:  # native's words for a server that went away
            raise McpStartError(f"mcp-client({self.name}): server is disconnected")
        return client

    async def resources(self, kind: str, cursor: str | None) -> dict[str, Any]:
        """One page of the server's `resources` or `resourceTemplates`, as the keys it
        sent (an error the server answers raises with its message)."""
        client = self._connected()
        if kind == "resources":
            page: Any = await client.list_resources(cursor=cursor, cache_mode="bypass")
        else:
            page = await client.list_resource_templates(cursor=cursor, cache_mode="bypass")
        return _sent(page)

    async def read_resource(self, uri: str) -> dict[str, Any]:
        """The server's `resources/read` result for `uri`, as the keys it sent."""
        return _sent(await self._connected().read_resource(uri, cache_mode="bypass"))

    async def aclose(self) -> None:
        """Stop the session and the server process (idempotent).

        A running session is let go politely (the stop event ends its context, up to
        5 s); one still starting is waiting on the server, which may never answer, so
        its task is cancelled at once. Either way the SDK's shielded shutdown has ended
        the server process when this returns.
        """
        self._stop.set()
        task, self._task = self._task, None
        if task is None:
            return
        if self._ready:
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(task), 5.0)
        if not task.done():
            task.cancel()
        # Never raises the task's own end; the SDK's shutdown inside it is shielded, so
        # even if this wait is cancelled the server process is still stopped.
        await asyncio.wait({task})


MAX_INSTRUCTION_BYTES = 32768
"""Native's cap on a server's prompt section (`### MCP server: <name>` and its
instructions, in UTF-8 bytes): a server over it fails to start."""


def check_instructions(server: str, instructions: str) -> None:
    """Raise `McpStartError` (native's words) when a server's section is over the cap."""
    section = f"### MCP server: {server}\n\n{instructions}" if instructions else ""
    if len(node_utf8(section)) > MAX_INSTRUCTION_BYTES:
        raise McpStartError(
            f"mcp-client({server}): server instructions exceed maxInstructionBytes "
            f"({MAX_INSTRUCTION_BYTES})"
        )


def _sent(result: Any) -> dict[str, Any]:
    # The keys the server sent (the SDK's defaults left out), in wire form.
    sent: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_unset=True)
    return sent


def _describe(exc: BaseException) -> str:
    # anyio task groups wrap the real error in an ExceptionGroup; show the leaves.
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return str(exc) or type(exc).__name__


class McpTool:
    """One tool of an MCP server, as the model sees it."""

    cancelled_text = "Error: [object Object]"
    """Native's MCP request rejects with the turn's abort reason, a plain object, as its
    fixture tools' does (`FixtureTool.cancelled_text`)."""
    session_only = True
    """A tool of the session's own MCP server: a child agent does not get it."""

    def __init__(self, connection: McpConnection, tool: Any):
        self._conn = connection
        self._tool = tool

    @property
    def name(self) -> str:
        """`mcp__<server>__<tool>`."""
        return tool_name(self._conn.name, self._tool.name)

    @property
    def description(self) -> str:
        """The server's description of the tool."""
        return str(self._tool.description or "")

    @property
    def parameters(self) -> dict[str, Any]:
        """The tool's input schema."""
        schema: dict[str, Any] = self._tool.input_schema
        return schema

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """MCP tools run directly: the client chose to mount the server."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Call the tool on its server."""
        return await self._conn.call(self._tool.name, args)


async def start_servers(
    specs: list[McpServerSpec], *, start_timeout: float = START_TIMEOUT
) -> list[McpConnection]:
    """Start every server, each within `start_timeout` seconds; if one fails, stop the
    others and raise its `McpStartError`. Cancelled, it stops them all, then re-raises."""
    connections = [McpConnection(spec, start_timeout) for spec in specs]
    results = await asyncio.gather(*(c.start() for c in connections), return_exceptions=True)
    failure = next((r for r in results if isinstance(r, BaseException)), None)
    if failure is not None:
        for c in connections:
            await c.aclose()
        raise failure
    return connections
