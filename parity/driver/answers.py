"""Answering the client's side: the agent's requests to the client, as the scenario says.

`ClientAnswers.answer` routes one agent->client request (permission, elicitation, fs,
terminal) to its answer per the scenario's `client` section, counting which answer of a
list applies. An answer may be held (`{answer: X, after: TRIGGER}`, fs/terminal
`after:`) until its trigger fires, or left unanswered (`never`): `held` reads that, the
run's `Hold` waits (`parity.driver.triggers`). The functions below it are pure: one
request plus one scenario answer -> the JSON-RPC response to send. Only `fs_answer`
touches the disk, and only inside the run's workdir; terminals, which own processes,
are served by `parity.driver.terminals`.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from parity.driver import jsonrpc
from parity.driver.terminals import Terminals
from parity.driver.workdir_files import Escape, Refused, parts_below, read_below, write_below

ANSWER_TABLE_KEYS = frozenset({"by_prompt", "by_tool", "default"})
"""The keys of `client.permission` in its table form (answers by prompt, by tool)."""

Problem = Callable[[str, str], None]
"""Notes a run-level problem: (kind, text)."""

Hold = Callable[[Any, dict[str, Any], int], Awaitable[None]]
"""Returns once a held answer may be sent: (its `after` trigger or `never`, the agent's
request, the request's frame seq)."""


async def _no_hold(after: Any, msg: dict[str, Any], seq: int) -> None:
    return None


class ClientAnswers:
    """The client's answers for one run: which scenario answer applies to each request."""

    def __init__(
        self,
        client: Mapping[str, Any],
        workdir: Path,
        terminals: Terminals,
        tool_titles: Mapping[str, str],
        problem: Problem,
        hold: Hold = _no_hold,
        prompt_of: Callable[[Any], str | None] = lambda sid: None,
    ) -> None:
        self.client = client
        self.prompt_of = prompt_of
        """sessionId -> the name of the prompt in flight in that session, if any."""
        self.hold = hold
        self.workdir = workdir
        self.terminals = terminals
        self.tool_titles = tool_titles
        """toolCallId -> title, from the run's tool_call updates (DSH asks by id only)."""
        self.problem = problem
        self.counters: dict[str, int] = {}

    def _count(self, key: str) -> int:
        n = self.counters.get(key, 0)
        self.counters[key] = n + 1
        return n

    async def answer(self, msg: dict[str, Any], seq: int = -1) -> dict[str, Any]:
        """The response to one agent->client request (frame `seq`), per the scenario's
        `client`: which answer applies is decided when the request arrives, and the answer
        is made (a file read, a terminal started) and sent once its hold, if any, is over."""
        req_id, method, params = msg["id"], msg["method"], msg.get("params")
        if method == "session/request_permission":
            titles = permission_titles(params, self.tool_titles)
            sid = params.get("sessionId") if isinstance(params, Mapping) else None
            policy = self.client.get("permission", "cancelled")
            key, answers = permission_policy(policy, titles, self.prompt_of(sid))
            answer, after = held(pick_answer(answers, self._count(f"permission:{key}")))
            await self._hold(after, msg, seq)
            return permission_answer(req_id, params, answer)
        if method == "elicitation/create":
            answers = self.client.get("elicitation", "cancel")
            answer, after = held(pick_answer(answers, self._count(method)))
            await self._hold(after, msg, seq)
            return elicitation_answer(req_id, answer)
        fs = self.client.get("fs") or {}
        if method in ("fs/read_text_file", "fs/write_text_file"):
            if fs.get("read" if method == "fs/read_text_file" else "write"):
                await self._hold(fs.get("after"), msg, seq)
                reply = fs_answer(req_id, method, params, self.workdir)
                message = str(reply.get("error", {}).get("message", ""))
                if ESCAPE in message:
                    path = params.get("path") if isinstance(params, dict) else None
                    self.problem(
                        "fs escape",
                        f"fs escape: the agent's {method} of {path} was refused: {message}",
                    )
                return reply
            self.problem("capability", f"agent called {method} without the client capability")
            return jsonrpc.method_not_found(req_id, method)
        if method.startswith("terminal/"):
            terminal = self.client.get("terminal")
            if terminal:
                await self._hold(
                    terminal.get("after") if isinstance(terminal, dict) else None, msg, seq
                )
                return await self.terminals.answer(req_id, method, params)
            self.problem("capability", f"agent called {method} without the client capability")
        return jsonrpc.method_not_found(req_id, method)

    async def _hold(self, after: Any, msg: dict[str, Any], seq: int) -> None:
        if after is not None:
            await self.hold(after, msg, seq)


# -- pure answers -------------------------------------------------------------------------


def pick_answer(policy: Any, index: int) -> Any:
    """The `index`-th (0-based) answer of a policy that may be a list (last repeats)."""
    if isinstance(policy, list):
        return policy[min(index, len(policy) - 1)] if policy else None
    return policy


def held(item: Any) -> tuple[Any, Any]:
    """An answer item as (the answer, its hold): `{answer: X, after: T}` -> (X, T),
    `never` -> (None, "never"), any other item -> (item, None)."""
    if item == "never":
        return None, "never"
    if isinstance(item, dict) and "answer" in item:
        return item["answer"], item.get("after")
    return item, None


def permission_policy(policy: Any, titles: set[str], prompt: str | None = None) -> tuple[str, Any]:
    """Which answer list applies to a permission request, and the key counting its uses.

    `policy` is the scenario's `client.permission`: answer(s), or
    `{by_prompt: {prompt: answer(s)}, by_tool: {name: answer(s)}, default: answer(s)}`
    (any of the three):
    the answers of `prompt` (the prompt in flight in the request's session) first, then
    those of a tool named in `titles`, then the default.
    """
    if isinstance(policy, dict) and not policy.keys().isdisjoint(ANSWER_TABLE_KEYS):
        by_prompt = policy.get("by_prompt") or {}
        if prompt is not None and prompt in by_prompt:
            return f"prompt:{prompt}", by_prompt[prompt]
        by_tool = policy.get("by_tool") or {}
        for name in sorted(by_tool):
            if name in titles:
                return f"tool:{name}", by_tool[name]
        return "default", policy.get("default", "cancelled")
    return "all", policy


def permission_answer(req_id: Any, params: Any, answer: Any) -> dict[str, Any]:
    """The response to a session/request_permission, for one scenario answer:
    `allow-once` / `reject-once` select the first offered option of that kind,
    `{option: ID}` selects `ID` as written, offered or not (how an agent takes an answer
    it did not offer), `cancelled` cancels, `error` is a JSON-RPC -32603."""
    if answer == "error":
        return jsonrpc.error(req_id, -32603, "Internal error")
    if isinstance(answer, Mapping) and isinstance(answer.get("option"), str):
        return jsonrpc.result(
            req_id, {"outcome": {"outcome": "selected", "optionId": answer["option"]}}
        )
    if answer in ("allow-once", "reject-once"):
        kind = answer.replace("-", "_")
        options = params.get("options") if isinstance(params, dict) else None
        for option in options if isinstance(options, list) else []:
            if isinstance(option, dict) and option.get("kind") == kind:
                return jsonrpc.result(
                    req_id, {"outcome": {"outcome": "selected", "optionId": option.get("optionId")}}
                )
    # `cancelled`, or no option of the wanted kind was offered: the only neutral answer.
    return jsonrpc.result(req_id, {"outcome": {"outcome": "cancelled"}})


def permission_titles(params: Any, known_titles: Mapping[str, str]) -> set[str]:
    """Names a permission request can be matched by: its toolCall title, or the title
    of the earlier tool_call update with the same id (DSH sends only the id), each also
    without an MCP-style `server__` / `server/` prefix."""
    tool_call = params.get("toolCall") if isinstance(params, dict) else None
    tool_call = tool_call if isinstance(tool_call, dict) else {}
    names: set[str] = set()
    for title in (tool_call.get("title"), known_titles.get(str(tool_call.get("toolCallId")))):
        if isinstance(title, str):
            names |= {title, title.rsplit("__", 1)[-1], title.rsplit("/", 1)[-1]}
    return names


def elicitation_answer(req_id: Any, answer: Any) -> dict[str, Any]:
    """The response to an elicitation/create for one scenario answer: `accept`,
    `decline`, `cancel`, or `{action, content}`."""
    content: Any = None
    if isinstance(answer, dict):
        action, content = answer.get("action", "cancel"), answer.get("content")
    else:
        action = answer or "cancel"
    value: dict[str, Any] = {"action": action}
    if action == "accept":
        value["content"] = content if content is not None else {}
    return jsonrpc.result(req_id, value)


def inside(path: Path, root: Path) -> bool:
    """Whether `path` is `root` or below it (both already resolved)."""
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


ESCAPE = "path goes through a link out of the workdir"
"""The start of the error message of an fs answer refused because of a link (the
agent's doing, `parity.driver.workdir_files.Escape`): `ClientAnswers` notes it."""


def fs_answer(req_id: Any, method: str, params: Any, workdir: Path) -> dict[str, Any]:
    """Serve fs/read_text_file or fs/write_text_file against files under `workdir`,
    never outside it, whatever links and `..` the path holds or gains meanwhile
    (`parity.driver.workdir_files`)."""
    params = params if isinstance(params, dict) else {}
    raw_path = params.get("path")
    if not isinstance(raw_path, str) or not os.path.isabs(raw_path):
        return jsonrpc.error(req_id, -32602, "Invalid params: path must be absolute")
    parts = parts_below(raw_path, str(workdir))
    if parts is None:
        return jsonrpc.error(
            req_id, -32602, f"Invalid params: path outside the workdir: {raw_path}"
        )
    if method == "fs/write_text_file":
        content = params.get("content")
        if not isinstance(content, str):
            return jsonrpc.error(req_id, -32602, "Invalid params: content must be a string")
        try:
            write_below(str(workdir), parts, content)
        except Escape as exc:
            return jsonrpc.error(req_id, -32602, f"Invalid params: {ESCAPE} ({exc})")
        except (OSError, Refused) as exc:
            return jsonrpc.error(req_id, -32603, f"Internal error: {exc}")
        return jsonrpc.result(req_id, {})
    try:
        text = read_below(str(workdir), parts)
    except FileNotFoundError:
        return jsonrpc.error(req_id, -32002, "Resource not found", {"path": raw_path})
    except Escape as exc:
        return jsonrpc.error(req_id, -32602, f"Invalid params: {ESCAPE} ({exc})")
    except (OSError, UnicodeDecodeError, Refused) as exc:
        return jsonrpc.error(req_id, -32603, f"Internal error: {exc}")
    line, limit = params.get("line"), params.get("limit")
    if isinstance(line, int) or isinstance(limit, int):
        lines = text.splitlines(keepends=True)
        start = max(line - 1, 0) if isinstance(line, int) else 0
        end = start + limit if isinstance(limit, int) else None
        text = "".join(lines[start:end])
    return jsonrpc.result(req_id, {"content": text})
