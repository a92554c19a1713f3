"""Hypothesis strategies for the client's side of a scenario: prompt content of each ACP
content type, permission answers (now, late, never; a reply, or an optionId as
written), and the session methods as steps (docs/scenarios.md, `client` and `steps`).
Pure: plain dicts in the file's shape.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from parity.explore.model_side import sentence
from parity.explore.vocabulary import (
    content_block_types,
    permission_option_kinds,
    permission_replies,
)

# A 1x1 PNG and a few bytes of WAV header: real enough for an agent that decodes them.
PNG_1PX = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
WAV_HEAD = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA="


def content_block(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """One ACP content block of `kind` (a `type` the ACP schema's `ContentBlock` names)."""
    if kind == "text":
        return sentence().map(lambda t: {"type": "text", "text": t})
    if kind == "image":
        return st.just({"type": "image", "mimeType": "image/png", "data": PNG_1PX})
    if kind == "audio":
        return st.just({"type": "audio", "mimeType": "audio/wav", "data": WAV_HEAD})
    if kind == "resource_link":
        return st.sampled_from(["notes.txt", "missing.md"]).map(
            lambda n: {"type": "resource_link", "name": n, "uri": f"file:///{{workdir}}/{n}"}
        )
    if kind == "resource":
        return sentence().map(
            lambda t: {
                "type": "resource",
                "resource": {
                    "uri": "file:///{workdir}/notes.txt",
                    "text": t,
                    "mimeType": "text/plain",
                },
            }
        )
    return st.just({"type": kind})


def prompt_body() -> st.SearchStrategy[dict[str, Any]]:
    """`text: ...` (most prompts), or `content:` blocks of any ACP type, `[]` included."""
    blocks = st.lists(st.sampled_from(content_block_types()).flatmap(content_block), max_size=3)
    return st.one_of(
        sentence().map(lambda t: {"text": t}),
        sentence().map(lambda t: {"text": t}),
        blocks.map(lambda b: {"content": b}),
    )


OFFERED_OPTION_IDS = ("allow-once", "reject-once")
"""The optionIds native and acp-plus offer for a fixture tool that asks first (as
`tools/permission-option-id`'s recordings show them)."""
MADE_UP_OPTION_ID = "no-such-option"


def option_answer() -> st.SearchStrategy[dict[str, str]]:
    """`{option: ID}`: an optionId selected as written, whether or not the request
    offered it: one offered, an ACP option kind used as an id (`allow_always` where only
    once-options are offered), or a made-up id (docs/scenarios.md, `permission`)."""
    ids = (*OFFERED_OPTION_IDS, *permission_option_kinds(), MADE_UP_OPTION_ID)
    return st.sampled_from(ids).map(lambda option: {"option": option})


def immediate_answer() -> st.SearchStrategy[Any]:
    """A permission answer sent as soon as the request arrives: one of the scenario
    schema's replies (most often), or an optionId as written (`option_answer`)."""
    replies = st.sampled_from(permission_replies())
    return st.one_of(replies, replies, option_answer())


def held_answer(prompt: str) -> st.SearchStrategy[Any]:
    """An answer for a request whose prompt is cancelled while it is pending: never sent,
    or sent late, once that prompt has ended."""
    late = immediate_answer().map(lambda a: {"answer": a, "after": {"prompt": prompt}})
    return st.one_of(st.just("never"), late)


SESSION_METHODS = (
    "session/list",
    "session/close",
    "session/set_mode",
    "session/set_config_option",
    "session/load",
    "session/resume",
)
"""The ACP methods `session_step` draws from."""


def session_step(
    sessions: tuple[str, ...], ignored: frozenset[str] = frozenset()
) -> st.SearchStrategy[dict[str, Any]]:
    """A session method as its step: list, close, set_mode, set_config_option, load,
    resume; none whose ACP method is `ignored` (one at least must be left)."""
    session = st.sampled_from(sessions)
    config_id = st.sampled_from(["model", "effort", "mode", "nonsense"])
    config_value = st.one_of(
        st.sampled_from(["mock", "low", "high", "plan", "default", "nope", ""]),
        st.integers(-1, 2),
        st.booleans(),
        st.none(),
    )
    by_method: dict[str, st.SearchStrategy[dict[str, Any]]] = {
        "session/list": st.just({"list_sessions": {}}),
        "session/close": session.map(lambda s: {"close_session": {"session": s}}),
        "session/set_mode": st.builds(
            lambda s, m: {"set_mode": {"session": s, "mode": m}},
            session,
            st.sampled_from(["default", "plan", "nonsense"]),
        ),
        "session/set_config_option": st.builds(
            lambda s, c, v: {"set_config_option": {"session": s, "config_id": c, "value": v}},
            session,
            config_id,
            config_value,
        ),
        "session/load": session.map(lambda s: {"load_session": {"session": s}}),
        "session/resume": session.map(lambda s: {"resume_session": {"session": s}}),
    }
    assert tuple(by_method) == SESSION_METHODS
    return st.one_of(*(strategy for m, strategy in by_method.items() if m not in ignored))
