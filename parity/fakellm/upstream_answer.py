"""A real provider's complete HTTP answer -> one scenario `llm` entry (pure).

Recording mode (docs/capture.md) forwards an agent's model call to a real provider and
keeps the answer as an `llm` entry, so the recorded scenario replays through the fake
in any dialect. This is the inverse of the fake's own renderers: what
`script.build_response` and a dialect renderer turn an entry into, `read_answer` (with
the dialect's two readers, `dialects.parse_answer`) turns back into the entry, for the
fake's bytes as for a provider's.

An entry has one reasoning text, one text and a list of tool calls, so a provider's
several text or thinking blocks are joined in order. What an entry cannot say is left
out: provider ids of the response and its items, thinking signatures, cache counters
(folded into the input tokens), the namespace of a Responses call (the fake picks it
again from the replayed request, `toolnames.py`). Malformed events are skipped: an
answer that is half readable still records what it says.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from parity.fakellm.answer_parts import (
    Event,
    Heard,
    as_int,
    as_mapping,
    entry_of,
    failure_of,
    http_error,
    is_sse,
    json_object,
    sse_events,
)

# -- OpenAI chat completions --------------------------------------------------------------

_CHAT_FINISH = {
    "stop": "stop",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "length": "max-tokens",
}


def _chat_text(content: Any) -> Any:
    """Message content as text: a string, or the text parts of a list."""
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, Mapping))
    return content


def _chat_reasoning(message: Mapping[str, Any]) -> Any:
    # DeepSeek's field first; others (OpenRouter, Ollama) say `reasoning`, and some send
    # both with the same text.
    return message.get("reasoning_content") or message.get("reasoning")


def _chat_usage(answer: Heard, usage: Any) -> None:
    if isinstance(usage, Mapping):
        details = as_mapping(usage.get("completion_tokens_details"))
        answer.usage = {
            "input": as_int(usage.get("prompt_tokens")),
            "output": as_int(usage.get("completion_tokens")),
            "reasoning": as_int(details.get("reasoning_tokens")),
        }


def _chat_calls(answer: Heard, calls: Any) -> None:
    """Tool-call deltas (or whole calls): id and name come once, argument fragments
    follow, all tied together by `index`."""
    for position, delta in enumerate(calls if isinstance(calls, list) else []):
        if not isinstance(delta, Mapping):
            continue
        index = delta.get("index")
        call = answer.call(index if isinstance(index, int) else position)
        function = as_mapping(delta.get("function"))
        if delta.get("id") and not call.id:
            call.id = str(delta["id"])
        if function.get("name"):
            call.name = str(function["name"])  # some providers repeat it in every delta
        if isinstance(function.get("arguments"), str):
            call.fragments.append(function["arguments"])


def _chat_choice(answer: Heard, choice: Any, key: str) -> None:
    if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
        return
    message = as_mapping(choice.get(key))
    answer.add(_chat_reasoning(message), _chat_text(message.get("content")), delta=key == "delta")
    _chat_calls(answer, message.get("tool_calls"))
    if reason := choice.get("finish_reason"):
        answer.finish = _CHAT_FINISH.get(str(reason), "stop")


def chat_event(answer: Heard, _name: str | None, event: Event) -> None:
    if event.get("error"):
        answer.error = failure_of(event["error"])
        return
    _chat_usage(answer, event.get("usage"))
    for choice in event.get("choices") or []:
        _chat_choice(answer, choice, "delta")


def chat_whole(answer: Heard, whole: Event) -> None:
    _chat_usage(answer, whole.get("usage"))
    for choice in whole.get("choices") or []:
        _chat_choice(answer, choice, "message")


# -- OpenAI responses ---------------------------------------------------------------------


def _responses_usage(answer: Heard, usage: Any) -> None:
    if isinstance(usage, Mapping):
        details = as_mapping(usage.get("output_tokens_details"))
        answer.usage = {
            "input": as_int(usage.get("input_tokens")),
            "output": as_int(usage.get("output_tokens")),
            "reasoning": as_int(details.get("reasoning_tokens")),
        }


def _responses_end(answer: Heard, response: Mapping[str, Any]) -> None:
    """The final `response` object's status, usage and error."""
    _responses_usage(answer, response.get("usage"))
    status = response.get("status")
    if status == "failed" or response.get("error"):
        answer.error = failure_of(response.get("error"))
    elif status == "incomplete":
        # Other reasons (content_filter) have no finish of their own in an entry.
        reason = as_mapping(response.get("incomplete_details")).get("reason")
        answer.finish = "max-tokens" if reason == "max_output_tokens" else "stop"
    # `completed` is the default finish: tool-calls with calls, else stop.


def _responses_call(answer: Heard, key: Any, item: Mapping[str, Any]) -> None:
    """A `function_call` (or `custom_tool_call`) item, opened or done."""
    call = answer.call(key)
    call.id = str(item.get("call_id") or call.id)
    call.name = str(item.get("name") or call.name)
    arguments = item.get("arguments", item.get("input"))
    if item.get("status") == "completed" and isinstance(arguments, str):
        call.final = arguments
    elif isinstance(arguments, str) and arguments:
        call.fragments.append(arguments)


_CALL_ITEMS = ("function_call", "custom_tool_call")
_ARGUMENT_DELTAS = (
    "response.function_call_arguments.delta",
    "response.custom_tool_call_input.delta",
)


def _responses_item(answer: Heard, key: Any, item: Mapping[str, Any], *, whole: bool) -> None:
    kind = item.get("type")
    if kind in _CALL_ITEMS:
        _responses_call(answer, key, {**item, "status": "completed"} if whole else item)
    elif whole and kind == "message":
        answer.add(text=_chat_text(item.get("content")))
    elif whole and kind == "reasoning":
        summary = _chat_text(item.get("summary")) or _chat_text(item.get("content"))
        answer.add(reasoning=summary)


def responses_event(answer: Heard, name: str | None, event: Event) -> None:
    kind = event.get("type", name)
    key = event.get("output_index")
    if kind == "response.output_text.delta":
        answer.add(text=event.get("delta"), delta=True)
    elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
        answer.add(reasoning=event.get("delta"), delta=True)
    elif kind in ("response.output_item.added", "response.output_item.done"):
        _responses_item(answer, key, as_mapping(event.get("item")), whole=False)
    elif kind in _ARGUMENT_DELTAS:
        answer.fragment(key, event.get("delta"))
    elif kind == "response.function_call_arguments.done" and key in answer.calls:
        arguments = event.get("arguments")
        answer.calls[key].final = arguments if isinstance(arguments, str) else None
    elif kind in ("response.completed", "response.incomplete", "response.failed"):
        _responses_end(answer, as_mapping(event.get("response")))
    elif kind == "error":
        answer.error = failure_of(event.get("error") or event)


def responses_whole(answer: Heard, whole: Event) -> None:
    for position, item in enumerate(whole.get("output") or []):
        if isinstance(item, Mapping):
            _responses_item(answer, position, item, whole=True)
    _responses_end(answer, whole)


# -- Anthropic messages -------------------------------------------------------------------

_ANTHROPIC_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "max-tokens",
}


def _anthropic_usage(answer: Heard, usage: Any) -> None:
    """Input and output tokens, as far as `usage` reports them (`message_delta`'s counts
    are cumulative). Input counts cache reads and writes too, as OpenAI's does."""
    if not isinstance(usage, Mapping):
        return
    inputs = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    if any(key in usage for key in inputs):
        answer.usage["input"] = sum(as_int(usage.get(key)) for key in inputs)
    if "output_tokens" in usage:
        answer.usage["output"] = as_int(usage["output_tokens"])


def _anthropic_block(answer: Heard, key: Any, block: Mapping[str, Any]) -> None:
    kind = block.get("type")
    if kind == "tool_use":
        call = answer.call(key)
        call.id, call.name = str(block.get("id") or ""), str(block.get("name") or "")
        call.opened_with = block.get("input")
    elif kind == "text":
        answer.add(text=block.get("text"))
    elif kind == "thinking":
        answer.add(reasoning=block.get("thinking"))


def _anthropic_delta(answer: Heard, key: Any, delta: Mapping[str, Any]) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        answer.add(text=delta.get("text"), delta=True)
    elif kind == "thinking_delta":
        answer.add(reasoning=delta.get("thinking"), delta=True)
    elif kind == "input_json_delta":
        answer.fragment(key, delta.get("partial_json"))


def _anthropic_stop(answer: Heard, reason: Any) -> None:
    if reason:
        answer.finish = _ANTHROPIC_FINISH.get(str(reason), "stop")


def anthropic_event(answer: Heard, name: str | None, event: Event) -> None:
    kind = event.get("type", name)
    key = event.get("index")
    if kind == "message_start":
        _anthropic_usage(answer, as_mapping(event.get("message")).get("usage"))
    elif kind == "content_block_start":
        _anthropic_block(answer, key, as_mapping(event.get("content_block")))
    elif kind == "content_block_delta":
        _anthropic_delta(answer, key, as_mapping(event.get("delta")))
    elif kind == "message_delta":
        _anthropic_stop(answer, as_mapping(event.get("delta")).get("stop_reason"))
        _anthropic_usage(answer, event.get("usage"))
    elif kind == "error":
        answer.error = failure_of(event.get("error"))


def anthropic_whole(answer: Heard, whole: Event) -> None:
    for position, block in enumerate(whole.get("content") or []):
        if isinstance(block, Mapping):
            _anthropic_block(answer, position, block)
    _anthropic_stop(answer, whole.get("stop_reason"))
    _anthropic_usage(answer, whole.get("usage"))


# -- dispatch -----------------------------------------------------------------------------

StreamReader = Callable[[Heard, str | None, Event], None]
"""(answer so far, SSE event name, event data): one dialect's streamed event read."""
WholeReader = Callable[[Heard, Event], None]
"""(answer so far, the whole JSON answer): one dialect's non-streaming answer read."""


def read_answer(
    stream: StreamReader, whole: WholeReader, status: int, body: bytes
) -> dict[str, Any]:
    """A provider's whole HTTP answer (status and raw body) as one `llm` entry mapping.

    HTTP errors become `error` with the status (a failure before any chunk on replay);
    an error inside a 200 answer becomes `error` without one (mid-stream), after the
    text and reasoning streamed before it. A body that is neither SSE nor a JSON object
    is recorded as an error (`PARITY_UNREADABLE`) rather than raised: the recording goes
    on and the entry shows what came back.
    """
    text = body.decode("utf-8", errors="replace")
    if status >= 400:
        return {"error": http_error(text, status)}
    answer = Heard()
    if (data := json_object(text)) is not None:
        # An error object with status 200 (every dialect's error JSON has `error`; a
        # Responses object has `error: null` unless it failed).
        if data.get("error"):
            answer.error = failure_of(data["error"])
        else:
            whole(answer, data)
        return entry_of(answer)
    if not is_sse(text):
        excerpt = text[:200]
        return {"error": {"message": f"unreadable answer: {excerpt}", "code": "PARITY_UNREADABLE"}}
    for name, event in sse_events(text):
        stream(answer, name, event)
        if answer.error is not None:
            break  # an error ends the answer; anything after it is not the model's
    return entry_of(answer)
