"""M2 `session/load` (docs/contract.md §6.1): what a load replays, and the one reading after.

Pure: `replay` turns a session's committed events into the `session/update` payloads a
load sends, in log order, through the live projection (`acp_plus.protocol.updates.project`) with
no context window, so no historical `usage_update` is ever replayed (§6.1 step 5).
`current_usage` is the single reading sent once the session is live again (step 8).

Where acp-plus does better than the reference (docs/contract-notes.md, "session/load"):
the user's own prompts are replayed too, as `user_message_chunk`s carrying the prompt's
message id, so a client can rebuild the whole conversation. Model context the agent adds
(`user/message` with a `source`: runtime context, workspace instructions) is not a user
prompt and is never shown. Every other event goes through `project` unchanged, so any
event kind the live projection learns (command runs, mode switches) replays as it was
sent live.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from acp_plus.core.attachments import AttachmentStore, AttachmentUnavailable
from acp_plus.core.history import used_tokens
from acp_plus.protocol.updates import DeliveryError, ImageReader, acp_content, project

log = logging.getLogger(__name__)

NOT_ENABLED = "session/load is not enabled by this deployment"


def user_prompt_updates(
    event: Mapping[str, Any], read_image: ImageReader | None
) -> list[dict[str, Any]]:
    """A user prompt's replay: one `user_message_chunk` per admitted block, in order.

    Raises DeliveryError when an image cannot be read back; then none of the message's
    chunks are sent (the assistant-message rule of §2, applied to the user's side).
    """
    updates = []
    for block in event.get("content") or ():
        content = acp_content(block, read_image)
        if content is not None:
            updates.append(
                {
                    "sessionUpdate": "user_message_chunk",
                    "messageId": event.get("id"),
                    "content": content,
                }
            )
    return updates


def is_user_prompt(event: Mapping[str, Any]) -> bool:
    """Whether `event` is what the user sent (not model context the agent added)."""
    return event.get("type") == "user/message" and event.get("source") is None


def replay_event(event: Mapping[str, Any], read_image: ImageReader | None) -> list[dict[str, Any]]:
    """The replayed updates of one committed event (`[]` for events with no projection).

    Raises DeliveryError when a block cannot be converted.
    """
    if is_user_prompt(event):
        return user_prompt_updates(event, read_image)
    if event.get("type") == "user/message":
        return []  # model context (a `source`): never shown as a prompt
    return project(event, context_window=None, used_tokens=None, read_image=read_image)


def replay(
    events: Iterable[Mapping[str, Any]], read_image: ImageReader | None
) -> Iterator[list[dict[str, Any]]]:
    """The updates a load sends, one group per event that has any, in log order.

    Lazy and grouped, so the sender reads images back only as it goes and can stop
    between two events (a request abort, §6.1). An event whose blocks cannot be
    converted is left out and logged, as a live projection outside a prompt is (§2
    failure rules); the rest of the history still replays.
    """
    for event in events:
        try:
            updates = replay_event(event, read_image)
        except DeliveryError as exc:
            log.warning("replay dropped %s %s: %s", event.get("type"), event.get("id"), exc)
            continue
        if updates:
            yield updates


def current_usage(
    events: list[dict[str, Any]], context_window: int | None
) -> dict[str, Any] | None:
    """The one `usage_update` after a replay: what the context holds now, against the
    current route's window; None when the window is unknown (§6.1 step 8)."""
    if context_window is None:
        return None
    return {"sessionUpdate": "usage_update", "used": used_tokens(events), "size": context_window}


def image_reader(store: AttachmentStore) -> ImageReader:
    """Reads a logged image reference (`{type:image, mimeType, digest}`) back from the
    attachment store for replay (§6.1 step 5); None when it is missing or corrupt."""

    def read(block: Mapping[str, Any]) -> tuple[str, str] | None:
        digest, mime_type = block.get("digest"), block.get("mimeType")
        if not isinstance(digest, str) or not isinstance(mime_type, str):
            return None
        try:
            data = store.read(digest)
        except AttachmentUnavailable:
            return None
        return base64.b64encode(data).decode("ascii"), mime_type

    return read
