"""Prompt content admission for `session/prompt` (§5).

`admit` runs pass 1 (validate every block before any side effect) and pass 2 (rebuild:
merge text and rendered resource links, keep images in wire order, refuse an empty
prompt or text that is not valid Unicode). Images come back as `{type:"image",
mimeType, data}`; the core stores the batch and swaps `data` for the stored digest with
`with_digests`, so base64 never reaches the session log. The checks the core makes
around storage take their inputs as parameters.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from acp_plus.core.attachments import BAD_MIME_TYPE, IMAGE_MIME_TYPES
from acp_plus.core.js_json import js_string, js_text, js_trim
from acp_plus.wire.errors import RpcError, internal_error, invalid_params

Kind = Literal["invalid", "internal"]

NOT_ADVERTISED = "inline image prompts were not advertised by this connection"
BAD_BASE64 = "image data must be canonical base64"
AUDIO = "audio prompt content is not supported"
RESOURCE = "embedded resource prompt content is not supported"
UNSUPPORTED = "unsupported ACP prompt content"
EMPTY = "empty prompt"
LONE_SURROGATE = "prompt text contains a lone surrogate (U+{:04X}); text must be valid Unicode"
NO_STORE = "no attachment store is mounted"
ROUTE_UNRESOLVED = "the current model route could not be resolved for image input"
ROUTE_UNVERIFIED = "the current model route could not be verified for image input"
STORE_FAILED = "unable to persist the prompt image batch"

_BASE64_CHARS = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


class ContentError(Exception):
    """A refused prompt: `invalid` answers -32602, `internal` -32603 (§5 failure mapping)."""

    def __init__(self, kind: Kind, message: str) -> None:
        super().__init__(message)
        self.kind: Kind = kind
        self.message = message

    def to_rpc(self) -> RpcError:
        """The JSON-RPC error this refusal answers the prompt with."""
        if self.kind == "invalid":
            return invalid_params(self.message)
        return internal_error(self.message)

    def __repr__(self) -> str:
        return f"ContentError({self.kind!r}, {self.message!r})"


def is_canonical_base64(data: str) -> bool:
    """RFC 4648 base64 with padding, standard alphabet, no whitespace, re-encoding equal."""
    if len(data) % 4 != 0 or not _BASE64_CHARS.fullmatch(data):
        return False
    try:
        decoded = base64.b64decode(data, validate=True)
    except binascii.Error:
        return False
    # Non-zero padding bits decode fine but re-encode differently: not canonical.
    return base64.b64encode(decoded).decode("ascii") == data


def _check_block(block: Any, image_advertised: bool) -> None:
    """Pass 1 for one block; raises the first refusal that applies."""
    kind = block.get("type") if isinstance(block, Mapping) else None
    if kind == "text":
        if not isinstance(block.get("text"), str):
            raise ContentError("invalid", UNSUPPORTED)
    elif kind == "resource_link":
        if not (isinstance(block.get("name"), str) and isinstance(block.get("uri"), str)):
            raise ContentError("invalid", UNSUPPORTED)
    elif kind == "image":
        if not image_advertised:
            raise ContentError("invalid", NOT_ADVERTISED)
        if block.get("mimeType") not in IMAGE_MIME_TYPES:
            raise ContentError("invalid", BAD_MIME_TYPE)
        data = block.get("data")
        if not isinstance(data, str) or not is_canonical_base64(data):
            raise ContentError("invalid", BAD_BASE64)
    elif kind == "audio":
        raise ContentError("invalid", AUDIO)
    elif kind == "resource":
        raise ContentError("invalid", RESOURCE)
    else:
        raise ContentError("invalid", UNSUPPORTED)


def render_resource_link(name: str, uri: str) -> str:
    """The text a `resource_link` becomes; the link is never fetched (§5 pass 2)."""
    return f"\n[resource_link name={js_string(name)} uri={js_string(uri)}]\n"


def text_only(blocks: Any) -> str | None:
    """The joined text of a non-empty list of text blocks; None when `blocks` is not one
    (another block type, a text that is not a string). What a slash command and a
    steering request accept as their prompt."""
    if not isinstance(blocks, list) or not blocks:
        return None
    texts = []
    for block in blocks:
        if not (isinstance(block, Mapping) and block.get("type") == "text"):
            return None
        text = block.get("text")
        if not isinstance(text, str):
            return None
        texts.append(text)
    return "".join(texts)


def has_visible_text(text: str) -> bool:
    """Whether `text` has a character JavaScript's `trim` would keep."""
    return js_trim(text) != ""


def check_unicode(text: str) -> None:
    """Refuse text holding a lone surrogate (JSON allows `"\\ud800"`; UTF-8 cannot hold it).

    Native would keep it (a JS string is UTF-16) and write it escaped; acp-plus's log,
    model requests and tool processes are UTF-8, so the prompt is refused up front,
    before any event is written (docs/contract-notes.md, "Hardening").
    """
    if lone := _SURROGATE.search(text):
        raise ContentError("invalid", LONE_SURROGATE.format(ord(lone.group())))


def _rebuild(blocks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    pending: list[str] = []

    def flush() -> None:
        # Joined as JS joins strings: a high surrogate ending one block and a low one
        # starting the next make one astral character, which is valid text.
        text = js_text("".join(pending))
        pending.clear()
        check_unicode(text)
        if text:
            content.append({"type": "text", "text": text})

    for block in blocks:
        kind = block["type"]
        if kind == "text":
            pending.append(block["text"])
        elif kind == "resource_link":
            pending.append(render_resource_link(block["name"], block["uri"]))
        else:  # image: pass 1 let nothing else through
            flush()
            content.append({"type": "image", "mimeType": block["mimeType"], "data": block["data"]})
    flush()
    has_image = any(part["type"] == "image" for part in content)
    if not has_image and not any(has_visible_text(part["text"]) for part in content):
        raise ContentError("invalid", EMPTY)
    return content


def admit(blocks: Sequence[Any], *, image_advertised: bool) -> list[dict[str, Any]]:
    """Validate and rebuild a prompt (§5 passes 1 and 2); raises ContentError.

    Returns text blocks `{type:"text", text}` and image blocks `{type:"image", mimeType,
    data}` in wire order. An empty list, or text that is all whitespace, is `empty prompt`.
    """
    for block in blocks:
        _check_block(block, image_advertised)
    return _rebuild(blocks)


def images(content: Sequence[Mapping[str, Any]]) -> list[tuple[str, bytes]]:
    """The `(mimeType, bytes)` batch to store, in prompt order."""
    return [
        (part["mimeType"], base64.b64decode(part["data"]))
        for part in content
        if part["type"] == "image"
    ]


def with_digests(
    content: Sequence[Mapping[str, Any]], digests: Sequence[str]
) -> list[dict[str, Any]]:
    """Content for the `user/message` event: each image's `data` replaced by its digest."""
    remaining = iter(digests)
    result: list[dict[str, Any]] = []
    for part in content:
        if part["type"] == "image":
            digest = next(remaining, None)
            if digest is None:
                raise ValueError("fewer digests than images")
            result.append({"type": "image", "mimeType": part["mimeType"], "digest": digest})
        else:
            result.append(dict(part))
    if next(remaining, None) is not None:
        raise ValueError("more digests than images")
    return result


# --- checks around the image batch (the core does the I/O and passes the answers) ---


def check_image_store(store_mounted: bool) -> None:
    """Refuse images when no attachment store is mounted."""
    if not store_mounted:
        raise ContentError("invalid", NO_STORE)


def image_route(provider: str | None, model: str | None, *, llm_mounted: bool) -> tuple[str, str]:
    """The prompt's snapshotted route for image input, or the `could not be resolved` refusal."""
    if not llm_mounted or not provider or not model:
        raise ContentError("invalid", ROUTE_UNRESOLVED)
    return provider, model


def route_unverified() -> ContentError:
    """The refusal (-32603) when resolving the route's model information throws."""
    return ContentError("internal", ROUTE_UNVERIFIED)


def check_image_modalities(model: str, input_modalities: Sequence[str] | None) -> None:
    """Refuse images for a model that does not declare `image` input."""
    if input_modalities is None or "image" not in input_modalities:
        raise ContentError("invalid", f'model "{model}" does not declare image input')


def store_failure(message: str, *, policy: bool) -> ContentError:
    """Map a store failure: image-policy errors keep the store's text (-32602), others
    become `unable to persist the prompt image batch` (-32603)."""
    if policy:
        return ContentError("invalid", message)
    return ContentError("internal", STORE_FAILED)
