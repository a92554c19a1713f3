"""A tool result too large for the model's context, bounded as native's `spill-policy`
bounds it: the whole text goes to a file, and the model keeps its head and tail within
`MAX_INLINE_TOKENS` (native's fixed-density estimate: four UTF-16 code units a token,
plus 4 a block), with `[...]` between them and a notice naming the file.

`read` is exempt (it windows its own output), and so is a result with anything but
text and images (`bound` says what happens to images). The file lies in one private
directory per agent process, below a directory per session (`session-` and the first
12 hex digits of the id's SHA-256), as native's does.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import string
import tempfile
from pathlib import Path
from typing import Any

from acp_plus.core.history import IMAGE_OMITTED_TEXT
from acp_plus.core.tools.base import ToolResult

MAX_INLINE_TOKENS = 12_500
"""The `acp` profile's `spill-policy` maxInlineTokens."""
GAP = "\n\n[...]\n\n"
HINT = "Use read with offset/limit, or grep this path to search within it."

_root: Path | None = None


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def price(text: str) -> int:
    """Native's estimate of one text block, in tokens."""
    return -(-_units(text) // 4) + 4


def notice(omitted: int, path: str) -> str:
    """The notice after the kept ends."""
    return f"(Omitted {omitted} bytes. Full formatted result stored at: {path}. {HINT})"


def _slice(text: str, length: int, tail: bool) -> str:
    """The first (or last) `length` UTF-16 units of `text`, never splitting a pair."""
    raw = text.encode("utf-16-le", "surrogatepass")
    units = len(raw) // 2
    cut = units - length if tail else length

    def unit(i: int) -> int:
        return int.from_bytes(raw[2 * i : 2 * i + 2], "little") if 0 <= i < units else 0

    if 0xD800 <= unit(cut - 1) <= 0xDBFF and 0xDC00 <= unit(cut) <= 0xDFFF:
        cut += 1 if tail else -1
    kept = raw[2 * cut :] if tail else raw[: 2 * cut]
    return kept.decode("utf-16-le", "surrogatepass")


def fit(text: str, budget: int, tail: bool) -> str:
    """The longest end of `text` whose price stays within `budget`."""
    low, high = 0, _units(text)
    while low < high:
        middle = -(-(low + high) // 2)
        candidate = _slice(text, middle, tail)
        if not candidate or price(candidate) <= budget:
            low = middle
        else:
            high = middle - 1
    return _slice(text, low, tail)


def retain(texts: list[str], budget: int) -> tuple[list[str], list[str]]:
    """Head and tail ends of `texts` (blocks), half the budget each."""
    head: list[str] = []
    tail: list[str] = []
    first, last = 0, len(texts) - 1
    head_units = 0
    remaining = -(-budget // 2)
    while first <= last:
        if price(texts[first]) <= remaining:
            head.append(texts[first])
            remaining -= price(texts[first])
            first += 1
            continue
        kept = fit(texts[first], remaining, False)
        head_units = _units(kept)
        if kept:
            head.append(kept)
        break
    remaining = budget // 2
    while last >= first:
        block = texts[last]
        if last == first:
            block = block.encode("utf-16-le", "surrogatepass")[2 * head_units :].decode(
                "utf-16-le", "surrogatepass"
            )
        if price(block) <= remaining:
            tail.append(block)
            remaining -= price(block)
            last -= 1
            continue
        kept = fit(block, remaining, True)
        if kept:
            tail.append(kept)
        break
    tail.reverse()
    return head, tail


def private_dir(prefix: str) -> Path:
    """A fresh 0700 directory in the temp dir named as Node's `mkdtemp` names one (six
    letters or digits after `prefix`): the model reads the path, and its length counts
    towards the spill-policy's budget like any text."""
    alphabet = string.ascii_letters + string.digits
    while True:
        path = Path(tempfile.gettempdir()) / (
            prefix + "".join(secrets.choice(alphabet) for _ in range(6))
        )
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return path


def save_text(session_id: str, name: str, content: str) -> str | None:
    """Save `content` as native's spill store does (`<random>-<name>` in the session's
    folder) and return its path; None when it cannot be written, which native's search
    tools then say instead of the path."""
    try:
        return _save(session_id, name.removesuffix(".txt"), content)
    except OSError:
        return None


def _save(session_id: str, tool: str, content: str) -> str:
    global _root
    if _root is None:
        _root = private_dir("dsh-spill-")
    folder = _root / f"session-{hashlib.sha256(session_id.encode()).hexdigest()[:12]}"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{secrets.token_hex(6)}-{tool}.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(content)
    return str(path)


def bound(result: ToolResult, tool: str, session_id: str, images: bool = False) -> ToolResult:
    """`result` as the model may see it: unchanged when small enough, else spilled.

    `images`: whether the turn's model takes images. For one that does not, an image is
    the text it reads instead (`IMAGE_OMITTED_TEXT`), priced and spilled as text, as
    native's parity-stream plugin hands its spill-policy that text. For one that does,
    a result with an image stays whole: native prices an image with the route's image
    calculator, and the parity-stream routes have none, so its spill-policy keeps such a
    result inline.
    """
    blocks: list[dict[str, Any]] = result.content
    if tool == "read" or not all(b.get("type") in ("text", "image") for b in blocks):
        return result
    if any(b.get("type") == "image" for b in blocks) and images:
        return result
    texts = [
        IMAGE_OMITTED_TEXT if b.get("type") == "image" else str(b.get("text", "")) for b in blocks
    ]
    if sum(price(t) for t in texts) <= MAX_INLINE_TOKENS:
        return result
    try:
        path = _save(session_id, tool, "".join(texts))
    except OSError:
        return result  # native keeps the inline content when the file cannot be written
    total = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    worst = notice(total, path)
    if price(worst) > MAX_INLINE_TOKENS:
        return result
    budget = max(0, MAX_INLINE_TOKENS - price(GAP) - price(f"\n\n{worst}"))
    head, tail = retain(texts, budget)
    kept = sum(len(t.encode("utf-8", "surrogatepass")) for t in [*head, *tail])
    footer = notice(total - kept, path)
    if not head and not tail:
        return ToolResult.text(footer, result.is_error)
    text = "".join(head) + GAP + "".join(tail) + f"\n\n{footer}"
    return ToolResult.text(text, result.is_error)


__all__ = ["HINT", "MAX_INLINE_TOKENS", "bound", "fit", "notice", "price", "retain", "save_text"]
