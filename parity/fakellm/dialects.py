"""The fake LLM's dialects: one `Dialect` per wire, the one registry of them (pure).

A dialect is everything that differs between two model wires: its name (recorded on
`ModelRequest.dialect`, declared by a target), the path endings of its model calls, its
reader into the canonical form (`canonical.py`), how the fake serves it (request checks,
side-request view, offered tools, error JSON, stream and whole-answer renderers, routes)
and how a recording talks to a real provider of it (`upstream_request.py`,
`upstream_answer.py`). Every table that used to list dialects is derived from `DIALECTS`
here: the server's routes (`ROUTES`), the model-call paths (`dialect_of`), the canonical
comparison (`canonical_request`), the dialects a target may declare
(`parity.targets.spec`), the ones `parity capture` can record against (`CAPTURABLE`), and
the scenario schema's `captured.upstream_dialect` enum is tested against it
(tests/fakellm/test_dialects.py). A new dialect is one entry in `DIALECTS`; a part left out
is a type error or a failing test that names the dialect.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from parity.fakellm import (
    anthropic_messages,
    canonical,
    gemini,
    openai_chat,
    openai_responses,
    toolnames,
    upstream_answer,
    upstream_request,
)
from parity.fakellm.script import Chunk, RequestView
from parity.fakellm.toolnames import Offered
from parity.fakellm.upstream_answer import StreamReader, WholeReader
from parity.fakellm.wire import Wire, anthropic_error, openai_error


@dataclass(frozen=True)
class Call:
    """What a renderer needs to know about the request it answers."""

    ident: str
    model: str
    body: Mapping[str, Any]
    namespaces: Mapping[str, str] = field(default_factory=dict)
    """call id -> Responses namespace (see `toolnames.rename`)."""


@dataclass(frozen=True)
class Provider:
    """How the server's one generic handler serves a provider dialect."""

    id_prefix: str
    problem: Callable[[Any], str | None]
    view: Callable[[Mapping[str, Any]], RequestView]
    offered: Callable[[Mapping[str, Any]], list[Offered]]
    error: Callable[[str, str, int], dict[str, Any]]
    """(message, code, HTTP status) -> the dialect's error JSON."""
    stream: Callable[[list[Chunk], Call], Wire]
    whole: Callable[[list[Chunk], Call], dict[str, Any]]


@dataclass(frozen=True)
class Capture:
    """How a recording (docs/capture.md) talks to a real provider of the dialect."""

    path: str
    """Appended to the provider's base URL, following the official SDK's convention."""
    body: Callable[[Mapping[str, Any], str, int], dict[str, Any]]
    """(canonical request, model, max tokens) -> the provider's streaming request body."""
    read_event: StreamReader
    read_whole: WholeReader
    headers: Callable[[str], dict[str, str]]
    """API key -> the headers that carry it (and the API revision asked for)."""
    forwarded: tuple[str, ...] = ()
    """Agent headers passed on when the agent speaks this dialect itself (which API
    revision its body is written for)."""


@dataclass(frozen=True)
class Dialect:
    """One model wire, whole."""

    name: str
    calls: tuple[str, ...]
    """Path endings of its model calls (catalog, tool and model-list requests are none)."""
    canonical: Callable[[Mapping[str, Any], str], dict[str, Any]]
    """(body, path) -> the canonical request (`canonical.py`)."""
    routes: Mapping[str, bool | None]
    """Paths below a run's base it is served at -> whether the path streams (None: the
    body's `stream` flag decides; Gemini streams by endpoint)."""
    provider: Provider | None
    """How the generic handler serves it; None: the server's own parity-stream handler."""
    capture: Capture | None
    """How a recording reaches a real provider of it; None: `parity capture` cannot."""


def _include_usage(body: Mapping[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, Mapping) and bool(options.get("include_usage"))


def _bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


ANTHROPIC_VERSION = "2023-06-01"
"""The Messages API revision a recording asks for when the agent names none."""

PARITY_STREAM = Dialect(
    name="parity-stream",
    calls=("/stream",),
    canonical=canonical.from_parity_stream,
    routes={"/stream": True},
    provider=None,
    capture=None,
)
OPENAI_CHAT = Dialect(
    name="openai-chat",
    calls=("/chat/completions",),
    canonical=canonical.from_openai_chat,
    routes={"/v1/chat/completions": None},
    provider=Provider(
        id_prefix="chatcmpl-",
        problem=openai_chat.problem,
        view=openai_chat.view,
        offered=toolnames.offered_chat,
        error=openai_error,
        stream=lambda chunks, call: openai_chat.render_stream(
            chunks, ident=call.ident, model=call.model, include_usage=_include_usage(call.body)
        ),
        whole=lambda chunks, call: openai_chat.render_full(
            chunks, ident=call.ident, model=call.model
        ),
    ),
    # OpenAI SDK base URLs include the version (`https://api.openai.com/v1`) ...
    capture=Capture(
        path="/chat/completions",
        body=upstream_request.chat_body,
        read_event=upstream_answer.chat_event,
        read_whole=upstream_answer.chat_whole,
        headers=_bearer,
    ),
)
OPENAI_RESPONSES = Dialect(
    name="openai-responses",
    calls=("/responses",),
    canonical=canonical.from_openai_responses,
    routes={"/v1/responses": None},
    provider=Provider(
        id_prefix="resp_",
        problem=openai_responses.problem,
        view=openai_responses.view,
        offered=toolnames.offered_responses,
        error=openai_error,
        stream=lambda chunks, call: openai_responses.render(
            chunks, ident=call.ident, model=call.model, namespaces=call.namespaces
        ),
        whole=lambda chunks, call: openai_responses.render_full(
            chunks, ident=call.ident, model=call.model, namespaces=call.namespaces
        ),
    ),
    capture=Capture(
        path="/responses",
        body=upstream_request.responses_body,
        read_event=upstream_answer.responses_event,
        read_whole=upstream_answer.responses_whole,
        headers=_bearer,
    ),
)
ANTHROPIC_MESSAGES = Dialect(
    name="anthropic-messages",
    calls=("/messages",),
    canonical=canonical.from_anthropic_messages,
    routes={"/v1/messages": None},
    provider=Provider(
        id_prefix="msg_",
        problem=anthropic_messages.problem,
        view=anthropic_messages.view,
        offered=toolnames.offered_flat,
        error=lambda message, _code, status: anthropic_error(message, status),
        stream=lambda chunks, call: anthropic_messages.render_stream(
            chunks, ident=call.ident, model=call.model
        ),
        whole=lambda chunks, call: anthropic_messages.render_full(
            chunks, ident=call.ident, model=call.model
        ),
    ),
    # ... Anthropic's exclude it (`https://api.anthropic.com`).
    capture=Capture(
        path="/v1/messages",
        body=upstream_request.anthropic_body,
        read_event=upstream_answer.anthropic_event,
        read_whole=upstream_answer.anthropic_whole,
        headers=lambda key: {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION},
        forwarded=("anthropic-version", "anthropic-beta"),
    ),
)
GEMINI = Dialect(
    name="gemini",
    calls=(":streamGenerateContent", ":generateContent"),
    canonical=canonical.from_gemini,
    routes={
        f"/{version}/models/{{model}}:{method}": method == "streamGenerateContent"
        for version in gemini.VERSIONS
        for method in ("streamGenerateContent", "generateContent")
    },
    provider=Provider(
        id_prefix="gemini-",
        problem=gemini.problem,
        view=gemini.view,
        offered=gemini.offered,
        error=gemini.error,
        stream=lambda chunks, call: gemini.render_stream(
            chunks, ident=call.ident, model=call.model
        ),
        whole=lambda chunks, call: gemini.render_full(chunks, ident=call.ident, model=call.model),
    ),
    capture=None,
)

DIALECTS: dict[str, Dialect] = {
    d.name: d for d in (PARITY_STREAM, OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC_MESSAGES, GEMINI)
}
"""Every dialect, by name, in the order messages list them."""

CAPTURABLE = tuple(name for name, d in DIALECTS.items() if d.capture is not None)
"""The dialects a recording can talk to (`parity capture --dialect`)."""


@dataclass(frozen=True)
class Route:
    """One served path of a provider dialect, as the server registers it."""

    dialect: str
    provider: Provider
    streams: bool | None


ROUTES: dict[str, Route] = {
    path: Route(d.name, d.provider, streams)
    for d in DIALECTS.values()
    if d.provider is not None
    for path, streams in d.routes.items()
}
"""Provider dialects by path below the run's base (parity-stream has its own handler)."""

CALL_PATHS: dict[str, str] = {ending: d.name for d in DIALECTS.values() for ending in d.calls}
"""Path endings of model calls -> their dialect."""


def dialect_of(path: str) -> str | None:
    """The dialect of a model-call path, or None for any other request."""
    path = path.split("?", 1)[0]
    for ending, dialect in CALL_PATHS.items():
        if path.endswith(ending):
            return dialect
    return None


def canonical_request(path: str, body: Any) -> dict[str, Any] | None:
    """The canonical form of a model call's body, or None when `path` is no model call
    or the body is not a JSON object."""
    dialect = dialect_of(path)
    if dialect is None or not isinstance(body, Mapping):
        return None
    out = DIALECTS[dialect].canonical(body, path)
    return {k: v for k, v in out.items() if v not in (None, [], "")}


def capture_of(dialect: str) -> Capture:
    """The recording part of a dialect; a ValueError names the dialects that have one."""
    entry = DIALECTS.get(dialect)
    if entry is None or entry.capture is None:
        known = ", ".join(CAPTURABLE)
        raise ValueError(f"unknown upstream dialect {dialect!r} (known: {known})")
    return entry.capture


def upstream_body(
    dialect: str, canonical: Mapping[str, Any], *, model: str, max_tokens: int = 8192
) -> dict[str, Any]:
    """The streaming request body of `dialect` asking `model` what `canonical` asks.

    Left out, because the canonical form or the dialect cannot carry it: image blocks
    (the canonical form keeps only their mime type, not the data); reasoning in the
    assistant history outside chat (see `upstream_request.responses_body`,
    `anthropic_body`); the reasoning effort for Anthropic (see `anthropic_body`); user and
    assistant messages with nothing left to say. Reshaped: a Responses tool result's
    several texts are joined into one, and Anthropic gets an empty object schema for a
    tool without parameters (both read back that way). `max_tokens` goes to Anthropic
    only, which requires a limit; the OpenAI dialects leave it to the provider (chat
    providers disagree on the field's name, `max_tokens` or `max_completion_tokens`).
    """
    return capture_of(dialect).body(canonical, model, max_tokens)


def parse_answer(dialect: str, status: int, body: bytes) -> dict[str, Any]:
    """A provider's whole HTTP answer in `dialect` as one `llm` entry mapping
    (`upstream_answer.read_answer`)."""
    capture = capture_of(dialect)
    return upstream_answer.read_answer(capture.read_event, capture.read_whole, status, body)
