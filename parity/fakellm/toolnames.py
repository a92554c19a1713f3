"""Scripted tool names -> the names an agent actually offered (pure).

A scenario scripts `tool_calls: [{name: echo}]` once for every target, but agents
expose fixture tools under their own names: DSH-family targets register `echo` as is,
MCP clients qualify it (`mcp__parity__echo`, `parity_echo`, ...), and codex-acp puts
MCP tools inside a Responses `namespace` tool (`mcp__parity` holding `echo`). A real
model picks from the offered list, so the fake does the same: a scripted name that
the request does not offer verbatim is resolved against the offered tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from parity.fakellm.script import Chunk

SEPARATORS = ("__", "_", ".", "-", "/", ":")
PREFERRED = "parity"
"""The MCP bridge's server name: among several qualified candidates, ours wins."""


@dataclass(frozen=True)
class Offered:
    """A tool the request offers: its callable name and, for Responses, its namespace."""

    name: str
    namespace: str | None = None


def resolve(name: str, offered: Sequence[Offered]) -> Offered:
    """The offered tool a scripted `name` stands for (the name itself when none fits).

    Order: an exact top-level name; the same name inside exactly one namespace; the
    one offered name that is `name` qualified by a prefix and separator (preferring
    prefixes that mention the parity MCP server).
    """
    if not offered or any(o.name == name and o.namespace is None for o in offered):
        return Offered(name)
    spaced = [o for o in offered if o.name == name]
    if len(spaced) == 1:
        return spaced[0]
    qualified = [
        o
        for o in offered
        if o.namespace is None and any(o.name.endswith(s + name) for s in SEPARATORS)
    ]
    if len(qualified) > 1:
        qualified = [o for o in qualified if PREFERRED in o.name[: -len(name)]]
    return qualified[0] if len(qualified) == 1 else Offered(name)


def rename(
    chunks: Iterable[Chunk], offered: Sequence[Offered]
) -> tuple[list[Chunk], dict[str, str]]:
    """Chunks with scripted tool names resolved, and `{call id: namespace}` for calls
    resolved into a namespace (only the Responses dialect can express those)."""
    out: list[Chunk] = []
    namespaces: dict[str, str] = {}
    for chunk in chunks:
        if chunk.get("type") == "tool-call-delta" and isinstance(chunk.get("name"), str):
            target = resolve(chunk["name"], offered)
            chunk = {**chunk, "name": target.name}
            if target.namespace is not None:
                namespaces[str(chunk.get("id"))] = target.namespace
        elif (
            chunk.get("type") == "block-end"
            and (chunk.get("block") or {}).get("type") == "tool-call"
        ):
            block = chunk["block"]
            chunk = {
                **chunk,
                "block": {**block, "name": resolve(str(block.get("name")), offered).name},
            }
        out.append(chunk)
    return out, namespaces


def _named(tools: Any, key: str | None = None) -> list[Offered]:
    out: list[Offered] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, Mapping):
            continue
        holder = tool.get(key) if key else tool
        if isinstance(holder, Mapping) and isinstance(holder.get("name"), str):
            out.append(Offered(holder["name"]))
    return out


def offered_flat(body: Mapping[str, Any]) -> list[Offered]:
    """Tools of parity-stream and Anthropic requests (`tools[].name`)."""
    return _named(body.get("tools"))


def offered_chat(body: Mapping[str, Any]) -> list[Offered]:
    """Tools of a chat-completions request (`tools[].function.name`, legacy `functions`)."""
    return _named(body.get("tools"), "function") + _named(body.get("functions"))


def offered_responses(body: Mapping[str, Any]) -> list[Offered]:
    """Tools of a Responses request, including the members of `namespace` tools."""
    out: list[Offered] = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
            continue
        if tool.get("type") == "namespace":
            out += [Offered(o.name, tool["name"]) for o in _named(tool.get("tools"))]
        else:
            out.append(Offered(tool["name"]))
    return out
