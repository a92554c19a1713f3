"""The fake LLM HTTP server: one aiohttp app, one base URL per run.

Thin I/O around the pure parts: each handler records the request, asks the run's
`Script` for an answer, renders it with the dialect's pure renderer and writes it
out, pausing before each chunk and holding the response open for hangs. The server
runs with handler cancellation on, so a client closing its connection cancels the
handler; that cancellation is how aborts (a target cancelling its turn) are seen.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from aiohttp import web

from parity.core.depth import MAX_DEPTH, cut, depth, may_be_deeper
from parity.core.transcript import ModelRequest
from parity.fakellm import gemini, parity_stream, toolnames
from parity.fakellm.dialects import (
    GEMINI,
    OPENAI_CHAT,
    PARITY_STREAM,
    ROUTES,
    Call,
    Route,
    canonical_request,
)
from parity.fakellm.identity import map_strings
from parity.fakellm.mcp_stdio import VIA_HEADER
from parity.fakellm.recorded import projection
from parity.fakellm.run import Captured, Run
from parity.fakellm.script import Response, build_response
from parity.fakellm.wire import Wire, assemble, batches, failure_fields
from parity.scenario.model import LlmEntry, Tool

if TYPE_CHECKING:
    from parity.fakellm.mcp_http import McpHttp
    from parity.fakellm.upstream import Upstream


async def _hold() -> None:
    """Wait until cancelled (the client disconnected or the run closed)."""
    await asyncio.Event().wait()


async def _body(request: web.Request) -> Any:
    raw = await request.read()
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    # Everything after the run follows a body level by level: a body nested deeper than
    # the harness follows is cut there, as the driver cuts a frame (`parity.core.depth`).
    return cut(value) if may_be_deeper(text) and depth(value) > MAX_DEPTH else value


def _json(status: int, body: Any) -> web.Response:
    return web.json_response(body, status=status, dumps=lambda v: json.dumps(v, ensure_ascii=False))


def _from_gemini(request: web.Request) -> bool:
    """A Gemini API client: its key header (or `?key=`) or the SDK's client header."""
    headers = request.headers
    return "x-goog-api-key" in headers or "x-goog-api-client" in headers or "key" in request.query


class FakeLLM:
    """The fake LLM server. Start it once, open one run per (scenario, target)."""

    def __init__(self) -> None:
        self.url = ""
        self._host = "127.0.0.1"
        self._runs: dict[str, Run] = {}
        self._runner: web.AppRunner | None = None
        self._mcp: McpHttp | None = None

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Listen on `host:port` (port 0: the OS picks a free one); sets `url`."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/runs/{run}/catalog", self._catalog)
        for path in PARITY_STREAM.routes:
            app.router.add_post(f"/runs/{{run}}{path}", self._parity_stream)
        app.router.add_post("/runs/{run}/tools/call", self._tool_call)
        for path, route in ROUTES.items():
            app.router.add_post(f"/runs/{{run}}{path}", self._provider(route))
        app.router.add_get("/runs/{run}/v1/models", self._models)
        for version in gemini.VERSIONS:
            models = f"/runs/{{run}}/{version}/models"
            app.router.add_post(f"{models}/{{model}}:countTokens", self._gemini_count)
            app.router.add_get(f"{models}/{{model}}", self._gemini_model)
        app.router.add_get("/runs/{run}/v1beta/models", self._gemini_models)
        app.router.add_route("*", "/runs/{run}/{tail:.*}", self._other)
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        bound = self._runner.addresses[0]
        self._host = host
        self.url = f"http://{host}:{bound[1]}"

    async def stop(self) -> None:
        """Close every run and stop listening; in-flight responses are cut."""
        for run_id in list(self._runs):
            self.close_run(run_id)
        if self._mcp is not None:
            await self._mcp.stop()
            self._mcp = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def open_run(
        self,
        run_id: str,
        *,
        llm: Sequence[LlmEntry | Mapping[str, Any]],
        tools: Sequence[Tool],
        catalog: Mapping[str, Any],
        upstream: Upstream | None = None,
        api_key: str | None = None,
    ) -> Run:
        """Register a run; its base URL is `{url}/runs/{run_id}`. With `upstream` the run
        records (its model calls go to that provider); with `api_key` it stands in for a
        provider that requires that key."""
        if run_id in self._runs:
            raise ValueError(f"run {run_id!r} is already open")
        entries = [e.params if isinstance(e, LlmEntry) else e for e in llm]
        run = Run(
            run_id,
            f"{self.url}/runs/{run_id}",
            entries,
            tools,
            catalog,
            upstream=upstream,
            api_key=api_key,
        )
        self._runs[run_id] = run
        return run

    async def mcp_http_entry(self, run_id: str) -> dict[str, Any]:
        """The ACP http `McpServer` entry serving `run_id`'s fixture tools over
        streamable-HTTP MCP (the MCP server starts on first use; see `mcp_http`)."""
        if self._mcp is None:
            from parity.fakellm.mcp_http import McpHttp  # imports the MCP SDK: only on demand

            mcp = McpHttp(self.url)
            await mcp.start(self._host)
            self._mcp = mcp
        return self._mcp.entry(run_id)

    def in_flight(self, run_id: str) -> int:
        """In-flight requests of a run (0 for an unknown run)."""
        run = self._runs.get(run_id)
        return 0 if run is None else run.in_flight

    def close_run(self, run_id: str) -> None:
        """Forget a run and end its in-flight requests. Unknown ids are ignored."""
        run = self._runs.pop(run_id, None)
        if run is not None:
            run.close()

    # -- handlers ---------------------------------------------------------------

    def _run(self, request: web.Request) -> Run:
        run = self._runs.get(request.match_info["run"])
        if run is None:
            raise web.HTTPNotFound(text=f"no open run {request.match_info['run']!r}\n")
        return run

    async def _start(self, request: web.Request, dialect: str) -> tuple[Run, ModelRequest]:
        run = self._run(request)
        body = await _body(request)
        path = request.path[len(f"/runs/{run.run_id}") :]
        return run, run.record(request.method, path, dialect, body)

    async def _catalog(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get(VIA_HEADER) == "mcp":
            # The harness's own MCP bridge listing the fixture tools: plumbing, not the
            # agent's traffic (its timing races the agent's first model call), yet a sign
            # the agent's turns will offer tools (side_requests.BRIDGE_HOLD).
            (run := self._run(request)).sides.bridge_started()
            return _json(200, run.catalog)
        run, _ = await self._start(request, PARITY_STREAM.name)
        return _json(200, run.catalog)

    async def _models(self, request: web.Request) -> web.StreamResponse:
        if _from_gemini(request):  # `GET /v1/models` is both OpenAI's and Gemini's
            return await self._gemini_models(request)
        run, _ = await self._start(request, OPENAI_CHAT.name)
        models = [
            {"id": model["id"], "object": "model", "created": 0, "owned_by": provider["id"]}
            for provider in run.catalog.get("providers", [])
            for model in provider.get("models", [])
        ]
        return _json(200, {"object": "list", "data": models})

    async def _gemini_models(self, request: web.Request) -> web.StreamResponse:
        run, _ = await self._start(request, GEMINI.name)
        return _json(200, {"models": gemini.models(run.catalog)})

    async def _gemini_model(self, request: web.Request) -> web.StreamResponse:
        if request.path.split("/")[3] == "v1" and not _from_gemini(request):
            return await self._other(request)  # OpenAI's `GET /v1/models/{id}` is not served
        run, rec = await self._start(request, GEMINI.name)
        model = gemini.find_model(run.catalog, request.match_info["model"])
        if model is None:
            rec.status, rec.problem = 404, "unknown model"
            message = f"models/{request.match_info['model']} is not found"
            return _json(404, gemini.error(message, "NOT_FOUND", 404))
        return _json(200, model)

    async def _gemini_count(self, request: web.Request) -> web.StreamResponse:
        """`countTokens`: an estimate from the request's texts; the script is not consulted."""
        _, rec = await self._start(request, GEMINI.name)
        why = gemini.count_problem(rec.body)
        if why is not None:
            return self._refuse(rec, why, gemini.error(why, "PARITY_PROTOCOL", 409))
        return _json(200, gemini.count_tokens(rec.body))

    async def _other(self, request: web.Request) -> web.StreamResponse:
        _, rec = await self._start(request, "other")
        rec.status, rec.problem = 404, "unknown endpoint"
        return _json(404, {"error": f"no such endpoint: {rec.path}"})

    def _refuse(self, rec: ModelRequest, problem: str, body: Any) -> web.Response:
        rec.status, rec.problem = 409, problem
        return _json(409, body)

    async def _answer(
        self,
        request: web.Request,
        run: Run,
        rec: ModelRequest,
        view: Callable[[Any], Any],
        why: str | None,
    ) -> Response | str:
        """The response for a model call, or the problem text (recorded): from the
        provider in a recording run, else from the script."""
        if why is not None:
            return why
        if run.upstream is not None:
            return await self._record(request, run, rec)
        seen = (
            projection(canonical_request(rec.path, rec.body), run.identity.scrub)
            if run.script.checks_requests
            else None
        )
        request_view = view(rec.body)
        if run.script.answers_side_requests:
            side = await run.sides.classify(request_view.has_tools)
        else:
            side = run.sides.seen(request_view.has_tools)
        rec.agent = run.agent_of(rec.body) if rec.dialect == PARITY_STREAM.name else 0
        answer = run.script.answer(dataclasses.replace(request_view, side=side), seen, rec.agent)
        rec.side = answer.side
        rec.entry = None if answer.side else answer.entry
        if answer.problem == "stale recording":
            rec.entry = None
            return (
                f"stale recording: the agent's request no longer matches llm[{answer.entry}], "
                "recorded for the request below; re-capture the scenario (docs/capture.md)\n"
                f"{answer.detail}"
            )
        if answer.response is None:
            return answer.problem or "no answer"
        return answer.response

    async def _record(self, request: web.Request, run: Run, rec: ModelRequest) -> Response | str:
        """Ask the provider; keep its answer (scrubbed) and answer the agent with it, built
        by the script engine exactly as a replay will build it (docs/capture.md)."""
        from parity.fakellm.upstream import UpstreamError

        assert run.upstream is not None
        slot = len(run.captured)
        run.captured.append(None)
        with run.answering(rec):
            try:
                entry = await run.upstream.answer(
                    rec.dialect, rec.path, rec.body, dict(request.headers)
                )
            except UpstreamError as exc:
                return f"upstream unreachable: {run.identity.scrub(str(exc))}"
        # A provider may echo the key (in an error message): the agent never sees it.
        entry = map_strings(entry, run.identity.redact)
        seen = projection(canonical_request(rec.path, rec.body), run.identity.scrub)
        run.captured[slot] = Captured(run.identity.scrub_value(entry), seen)
        rec.entry = slot
        return build_response(entry)

    def _key_problem(self, run: Run, request: web.Request) -> str | None:
        """Why a call to a key-guarded run is refused (401), or None."""
        if run.api_key is None:
            return None
        headers = request.headers
        given = headers.get("x-api-key") or headers.get("x-goog-api-key")
        given = given or request.query.get("key")  # Gemini's key as a query parameter
        bearer = headers.get("authorization", "")
        if bearer.lower().startswith("bearer "):
            given = given or bearer[7:]
        if given == run.api_key:
            return None
        # Echoing the key given, as some providers do (masked), so tests see a recording
        # scrub it.
        return "missing API key" if not given else f"invalid API key: {given}"

    async def _stream(
        self,
        request: web.Request,
        run: Run,
        rec: ModelRequest,
        reply: Response,
        wire: Wire,
        content_type: str,
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            status=200, headers={"Content-Type": content_type, "Cache-Control": "no-cache"}
        )
        with run.answering(rec):
            try:
                await response.prepare(request)
                if reply.delay:
                    await response.write(wire.head)  # with the headers, even when empty
                    for part in wire.parts:
                        await asyncio.sleep(reply.delay)
                        await response.write(part)
                else:  # an empty batch still sends the headers: the client sees the 200 now
                    for batch in batches([wire.head, *wire.parts]) or [b""]:
                        await response.write(batch)
                if reply.hang:
                    await _hold()
                await response.write_eof()
            except ConnectionError:  # the client left between two writes
                run.interrupted(rec)
        return response

    async def _parity_stream(self, request: web.Request) -> web.StreamResponse:
        run, rec = await self._start(request, PARITY_STREAM.name)
        reply = await self._answer(
            request, run, rec, parity_stream.view, parity_stream.problem(rec.body)
        )
        if isinstance(reply, str):
            return self._refuse(rec, reply, parity_stream.protocol_error(reply, rec.body))
        chunks, _ = toolnames.rename(reply.chunks, toolnames.offered_flat(rec.body))
        wire = parity_stream.render(chunks)
        return await self._stream(request, run, rec, reply, wire, "application/x-ndjson")

    def _provider(self, route: Route) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        """The handler of one provider dialect's path (see `dialects.ROUTES`)."""
        spec = route.provider

        async def handle(request: web.Request) -> web.StreamResponse:
            run, rec = await self._start(request, route.dialect)
            refused = self._key_problem(run, request)
            if refused is not None:
                rec.status, rec.problem = 401, refused
                return _json(401, spec.error(refused, "authentication_error", 401))
            reply = await self._answer(request, run, rec, spec.view, spec.problem(rec.body))
            if isinstance(reply, str):
                return self._refuse(rec, reply, spec.error(reply, "PARITY_PROTOCOL", 409))
            chunks, spaces = toolnames.rename(reply.chunks, spec.offered(rec.body))
            model = str(request.match_info.get("model") or rec.body.get("model", "mock"))
            call = Call(f"{spec.id_prefix}{rec.seq}", model, rec.body, spaces)
            if reply.error_status is None:
                if rec.body.get("stream") if route.streams is None else route.streams:
                    wire = spec.stream(chunks, call)
                    return await self._stream(request, run, rec, reply, wire, "text/event-stream")
                with run.answering(rec):  # a whole answer takes as long as its stream would
                    await asyncio.sleep(reply.delay * len(reply.chunks))
                    if reply.hang:
                        await _hold()
            failure = assemble(reply.chunks).failure
            if failure is not None:
                # before the stream, or mid-stream in a non-streaming request: HTTP error
                rec.status = int(reply.error_status or failure.get("status") or 500)
                message, code, _ = failure_fields(failure)
                return _json(rec.status, spec.error(message, code, rec.status))
            return _json(200, spec.whole(chunks, call))

        return handle

    async def _tool_call(self, request: web.Request) -> web.StreamResponse:
        via = "mcp" if request.headers.get(VIA_HEADER) == "mcp" else PARITY_STREAM.name
        run, rec = await self._start(request, via)
        why = parity_stream.tool_call_problem(rec.body)
        tool = None if why else run.tools.get(rec.body["name"])
        if tool is None:
            why = why or f"unknown tool: {rec.body['name']}"
            return self._refuse(rec, why, parity_stream.protocol_error(why, rec.body))
        with run.answering(rec):
            await asyncio.sleep(tool.delay_ms / 1000.0)
            if tool.hang:
                await _hold()
        return _json(200, parity_stream.tool_result(tool))
