"""`usage_update.used` as native 0.2.1-rc.2's token meter measures it. Pure.

Native reports how full the context is after a model step with usage: the provider's
usage (input, cache reads and writes, output) when it is at least the meter's own estimate
of that request and its answer, else the estimate. The estimate is a fixed density, four
UTF-16 code units a token, counted the way native's meter counts its session surface:

- a text or reasoning block: its characters, plus 4 for the block;
- a tool-call block: its name and its arguments each, plus 4;
- any other block: its JSON text, plus 4;
- a message: its blocks plus 4; the system prompt: its text plus 4, no block overhead;
- the tools shown: their JSON text plus 4, none when there are none.

Right after the step the surface is the request's messages and the answer, so no later
change is added (docs/contract-notes.md, "usage_update.used").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from acp_plus.core.history import usage_tokens
from acp_plus.core.js_json import js_json

if TYPE_CHECKING:  # the llm package reads history, which reads this module
    from acp_plus.core.llm.base import ModelRequest

CHARS_PER_TOKEN = 4
OVERHEAD = 4


def _tokens(text: str) -> int:
    """Tokens of `text` at the fixed density, counting UTF-16 code units as JS does."""
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    return -(-units // CHARS_PER_TOKEN)


def block_tokens(block: Mapping[str, Any]) -> int:
    """One content block (module doc)."""
    kind = block.get("type")
    if kind in ("text", "reasoning"):
        return _tokens(str(block.get("text", ""))) + OVERHEAD
    if kind == "tool-call":
        name, arguments = str(block.get("name", "")), block.get("arguments", "")
        raw = arguments if isinstance(arguments, str) else js_json(arguments)
        return _tokens(name) + _tokens(raw) + OVERHEAD
    return _tokens(js_json(dict(block))) + OVERHEAD


def message_tokens(message: Mapping[str, Any]) -> int:
    """One request message: its blocks plus the role's framing."""
    return sum(block_tokens(b) for b in message.get("content") or ()) + OVERHEAD


def request_tokens(
    system: str | None,
    tools: Sequence[Mapping[str, Any]],
    messages: Sequence[Mapping[str, Any]],
    answer: Sequence[Mapping[str, Any]],
) -> int:
    """The meter's estimate of one step: the request and the answer's blocks."""
    total = _tokens(system) + OVERHEAD if system else 0
    if tools:
        total += _tokens(js_json([dict(t) for t in tools])) + OVERHEAD
    total += sum(message_tokens(m) for m in messages)
    if answer:
        total += message_tokens({"content": list(answer)})
    return total


def used(usage: Mapping[str, Any], estimate: int) -> int:
    """What `usage_update.used` says after a step: the provider's count unless the
    meter's estimate is larger."""
    counted = usage_tokens(usage)
    return counted if counted >= estimate else estimate


def reading(
    request: ModelRequest, answer: Sequence[Mapping[str, Any]], usage: Mapping[str, Any]
) -> int:
    """The meter after one step: `request` and the `answer` it got, with its usage."""
    return used(usage, request_tokens(request.system, request.tools, request.messages, answer))
