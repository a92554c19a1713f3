"""M5 elicitation (docs/contract.md §6.5): the `ask_user_question` tool, bridged to the
standard ACP `elicitation/create` request in form mode.

The pure part reads the model's questions, builds the form (`form_params`: one schema
property per question, plus an optional free-text `<id>__other` for questions with
options) and turns the client's answer into the tool result (`tool_result`). The tool
itself only asks through the `Ask` callable the session gives it, which sends the
request and withdraws it (`$/cancel_request`) when the turn is cancelled while the form
is open (`acp_plus/features/wiring.py`), so a cancel never waits on a user.

The tool is offered only on connections whose client declared
`clientCapabilities.elicitation.form` (docs/contract-notes.md, "Elicitation").
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from acp_plus.core.js_json import js_json, js_trim
from acp_plus.core.tools.base import ToolContext, ToolResult
from acp_plus.wire.errors import RpcError

TOOL_NAME = "ask_user_question"
OTHER_SUFFIX = "__other"
OTHER_PROPERTY = {
    "type": "string",
    "title": "Other (optional)",
    "description": "Free-text answer instead of the listed choices.",
}
DECLINED = "The user declined to answer the question."
CANCELLED = "The user cancelled the question."
NO_FORMS = (
    "The client cannot show questions: it did not declare elicitation.form. Ask in your "
    "reply instead."
)
MAX_QUESTIONS = 8

_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

Ask = Callable[[dict[str, Any]], Awaitable[Any]]
"""Sends `elicitation/create` with these params and returns the client's result."""

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "questions": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_QUESTIONS,
            "description": "The questions, shown to the user together as one form.",
            "items": {
                "type": "object",
                "properties": {
                    "id": {
                        "type": "string",
                        "description": "Key of this answer (letters, digits, _ and -); "
                        "default q1, q2, ... in order.",
                    },
                    "question": {"type": "string", "description": "The question itself."},
                    "header": {"type": "string", "description": "A short title for it."},
                    "detail": {"type": "string", "description": "Context the user may need."},
                    "options": {
                        "type": "array",
                        "description": "Choices to pick from; leave out for a free-text answer.",
                        "items": {
                            "type": "object",
                            "properties": {
                                "label": {"type": "string"},
                                "description": {"type": "string"},
                            },
                            "required": ["label"],
                        },
                    },
                    "multiSelect": {
                        "type": "boolean",
                        "description": "Whether several options may be picked (default false).",
                    },
                },
                "required": ["question"],
            },
        }
    },
    "required": ["questions"],
}

DESCRIPTION = (
    "Ask the user one or more questions and wait for the answers, when you cannot "
    "continue well without their decision. The user may pick listed options, write "
    "their own answer, decline or cancel. Returns the answers as JSON: "
    '{"answers": [{"id", "selected": [...], "custom"?}]}.'
)


@dataclass(frozen=True)
class Option:
    """One listed choice."""

    label: str
    description: str | None = None


@dataclass(frozen=True)
class Question:
    """One question of a form."""

    id: str
    question: str
    header: str | None = None
    detail: str | None = None
    options: tuple[Option, ...] = ()
    multi: bool = False


def _text(raw: Mapping[str, Any], key: str, where: str, *, required: bool) -> str | None:
    value = raw.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not js_trim(value)):
        kind = "a non-empty string" if required else "a string"
        raise ValueError(f"{where}.{key} must be {kind}")
    return value


def _options(raw: Any, where: str) -> tuple[Option, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ValueError(f"{where}.options must be an array")
    options = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise ValueError(f"{where}.options[{i}] must be an object")
        label = _text(item, "label", f"{where}.options[{i}]", required=True)
        assert label is not None
        options.append(Option(label, _text(item, "description", where, required=False)))
    labels = [o.label for o in options]
    if len(set(labels)) != len(labels):
        raise ValueError(f"{where}.options: labels must be unique")
    return tuple(options)


def parse_questions(args: Mapping[str, Any]) -> list[Question]:
    """The questions of a tool call; a ValueError's message is meant for the model."""
    raw = args.get("questions")
    if not isinstance(raw, list) or not raw:
        raise ValueError("questions must be a non-empty array")
    if len(raw) > MAX_QUESTIONS:
        raise ValueError(f"at most {MAX_QUESTIONS} questions per call")
    questions: list[Question] = []
    for i, item in enumerate(raw):
        where = f"questions[{i}]"
        if not isinstance(item, Mapping):
            raise ValueError(f"{where} must be an object")
        qid = item.get("id", f"q{i + 1}")
        if not isinstance(qid, str) or not _ID.fullmatch(qid) or qid.endswith(OTHER_SUFFIX):
            raise ValueError(
                f"{where}.id must be 1-64 letters, digits, _ or - and not end in {OTHER_SUFFIX}"
            )
        if any(q.id == qid for q in questions):
            raise ValueError(f"{where}.id {qid!r} is used twice")
        multi = item.get("multiSelect", False)
        if not isinstance(multi, bool):
            raise ValueError(f"{where}.multiSelect must be a boolean")
        question = _text(item, "question", where, required=True)
        assert question is not None
        questions.append(
            Question(
                id=qid,
                question=question,
                header=_text(item, "header", where, required=False),
                detail=_text(item, "detail", where, required=False),
                options=_options(item.get("options"), where),
                multi=multi,
            )
        )
    return questions


def _property(question: Question) -> dict[str, Any]:
    if not question.options:
        prop: dict[str, Any] = {"type": "string", "title": question.header or question.question}
        if question.detail is not None:
            prop["description"] = question.detail
        return prop
    title = question.header if question.header is not None else question.question
    description = question.question if question.header is not None else question.detail
    labels = [o.label for o in question.options]
    if question.multi:
        prop = {"type": "array", "title": title}
        if description is not None:
            prop["description"] = description
        prop["items"] = {"type": "string", "enum": labels}
        return prop
    prop = {"type": "string", "title": title}
    if description is not None:
        prop["description"] = description
    choices = []
    for option in question.options:
        choice: dict[str, Any] = {"const": option.label, "title": option.label}
        if option.description is not None:
            choice["description"] = option.description
        choices.append(choice)
    prop["oneOf"] = choices
    return prop


def form_params(session_id: str, tool_call_id: str, questions: list[Question]) -> dict[str, Any]:
    """The `elicitation/create` params for `questions` (§6.5 shapes; no `required`)."""
    properties: dict[str, Any] = {}
    for question in questions:
        properties[question.id] = _property(question)
        if question.options:
            properties[question.id + OTHER_SUFFIX] = dict(OTHER_PROPERTY)
    return {
        "sessionId": session_id,
        "toolCallId": tool_call_id,
        "mode": "form",
        "message": "\n\n".join(q.question for q in questions),
        "requestedSchema": {"type": "object", "properties": properties},
    }


def _selected(question: Question, value: Any) -> list[str]:
    if question.options and question.multi:
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    return [value] if isinstance(value, str) and value else []


def answers(questions: list[Question], content: Any) -> dict[str, Any]:
    """The accepted form as the model gets it: `{answers: [{id, selected, custom?}]}`."""
    content = content if isinstance(content, Mapping) else {}
    listed = []
    for question in questions:
        entry: dict[str, Any] = {
            "id": question.id,
            "selected": _selected(question, content.get(question.id)),
        }
        other = content.get(question.id + OTHER_SUFFIX) if question.options else None
        custom = js_trim(other) if isinstance(other, str) else ""
        if custom:
            entry["custom"] = custom
        listed.append(entry)
    return {"answers": listed}


def tool_result(questions: list[Question], response: Any) -> ToolResult:
    """The tool result for the client's `elicitation/create` result (§6.5)."""
    action = response.get("action") if isinstance(response, Mapping) else None
    if action == "accept":
        return ToolResult.text(js_json(answers(questions, response.get("content"))))
    if action == "decline":
        return ToolResult.text(DECLINED, is_error=True)
    if action == "cancel":
        return ToolResult.text(CANCELLED, is_error=True)
    return ToolResult.text(f"The client gave no usable answer: {js_json(response)}", True)


class AskUserQuestion:
    """The `ask_user_question` tool of one session (never needs an approval)."""

    name = TOOL_NAME
    description = DESCRIPTION
    parameters = PARAMETERS

    def __init__(self, ask: Ask, forms_supported: Callable[[], bool]) -> None:
        self._ask = ask
        self._forms_supported = forms_supported

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Asking the user is what the tool does; there is nothing else to approve."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Show the form and wait for the answer; a cancelled turn withdraws it."""
        try:
            questions = parse_questions(args)
        except ValueError as exc:
            return ToolResult.text(f"{TOOL_NAME}: {exc}", is_error=True)
        if not self._forms_supported():
            # The client re-initialized without the capability after the session began.
            return ToolResult.text(NO_FORMS, is_error=True)
        try:
            response = await self._ask(form_params(ctx.session_id, ctx.call_id, questions))
        except RpcError as exc:
            return ToolResult.text(f"The client could not show the question: {exc.message}", True)
        return tool_result(questions, response)
