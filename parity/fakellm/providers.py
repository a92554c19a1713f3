"""The provider dialects as data: one `Provider` per endpoint, pure parts only.

The server has a single handler for all of them; what differs (request checks,
side-request view, tool list, error JSON, stream and whole-answer renderers) is
looked up here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from parity.fakellm import anthropic_messages, gemini, openai_chat, openai_responses, toolnames
from parity.fakellm.script import Chunk, RequestView
from parity.fakellm.toolnames import Offered
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
    """One provider dialect, as the server's generic handler uses it."""

    dialect: str
    """The name recorded on `ModelRequest.dialect`."""
    id_prefix: str
    problem: Callable[[Any], str | None]
    view: Callable[[Mapping[str, Any]], RequestView]
    offered: Callable[[Mapping[str, Any]], list[Offered]]
    error: Callable[[str, str, int], dict[str, Any]]
    """(message, code, HTTP status) -> the dialect's error JSON."""
    stream: Callable[[list[Chunk], Call], Wire]
    whole: Callable[[list[Chunk], Call], dict[str, Any]]
    streams: bool | None = None
    """Whether the endpoint streams; None: the body's `stream` flag decides (Gemini
    streams by endpoint, and names the model in the path: `{model}` of the route)."""


def _include_usage(body: Mapping[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, Mapping) and bool(options.get("include_usage"))


PROVIDERS: dict[str, Provider] = {
    "/v1/chat/completions": Provider(
        dialect="openai-chat",
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
    "/v1/responses": Provider(
        dialect="openai-responses",
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
    "/v1/messages": Provider(
        dialect="anthropic-messages",
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
}
"""Provider dialects by path below the run's base."""

_GEMINI = Provider(
    dialect=gemini.DIALECT,
    id_prefix="gemini-",
    problem=gemini.problem,
    view=gemini.view,
    offered=gemini.offered,
    error=gemini.error,
    stream=lambda chunks, call: gemini.render_stream(chunks, ident=call.ident, model=call.model),
    whole=lambda chunks, call: gemini.render_full(chunks, ident=call.ident, model=call.model),
)
PROVIDERS.update(
    {
        f"/{version}/models/{{model}}:{method}": replace(
            _GEMINI, streams=method == "streamGenerateContent"
        )
        for version in gemini.VERSIONS
        for method in ("streamGenerateContent", "generateContent")
    }
)
