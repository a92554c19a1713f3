"""Fixture tools over streamable-HTTP MCP on loopback (no subprocess per session).

The same server as the stdio bridge (`mcp_stdio.fixture_server`), served by the
official SDK's streamable-HTTP app under uvicorn on the caller's event loop, one
endpoint per run: `{url}/runs/<run_id>/mcp`. Calls are forwarded to the fake LLM's
`/tools/call` of that run, so recording, delays and hangs stay in one place; when
the agent cancels a call or drops the connection the forwarded request is dropped
and the fake records it as aborted. Starting it costs the SDK's import (about a
second) once per process instead of once per agent session.
"""

from __future__ import annotations

import asyncio
from typing import Any

from parity.fakellm.mcp_stdio import SERVER_NAME, VIA_HEADER, fixture_server


class McpHttp:
    """Streamable-HTTP MCP fixture tools for the runs of one fake LLM server."""

    def __init__(self, fake_url: str) -> None:
        self.fake_url = fake_url.rstrip("/")
        self.url = ""
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self._http: Any = None

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Listen on `host:port` (0: the OS picks one); sets `url`."""
        import httpx
        import uvicorn

        self._http = httpx.AsyncClient(timeout=None, headers={VIA_HEADER: "mcp"})

        def base_of(ctx: Any) -> str:
            return f"{self.fake_url}/runs/{ctx.request.path_params['run']}"

        mcp = fixture_server(self._http, base_of)
        app = mcp.streamable_http_app(streamable_http_path="/runs/{run}/mcp", host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()  # re-raise why it could not start
                raise RuntimeError("MCP HTTP server stopped while starting")
            await asyncio.sleep(0.01)
        bound = self._server.servers[0].sockets[0].getsockname()
        self.url = f"http://{host}:{bound[1]}"

    async def stop(self) -> None:
        """Stop serving; open MCP sessions are cut."""
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
            self._server = self._task = None
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def entry(self, run_id: str) -> dict[str, Any]:
        """The ACP `McpServer` (http) object pointing a target at this run's tools."""
        return {
            "type": "http",
            "name": SERVER_NAME,
            "url": f"{self.url}/runs/{run_id}/mcp",
            "headers": [],
        }
