"""The bridge's own checks of request parameters (pure).

By the time a handler runs, `schema_check.py` has parsed its params with the ACP schema,
as native's SDK does before dispatch, and the handler reads that output: the keys have
their schema types (a caught value has fallen back, a refused list item is gone).
Handlers read the top-level `params` keys only, so `_meta` can never override a
parameter (§1.0). These checks answer the bridge's own `Invalid params: <detail>` texts
where native checks a value itself.
"""

from __future__ import annotations

import re
from typing import Any

from acp_plus.wire.errors import invalid_params

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a str from JSON holds pairs combined


def absolute_cwd(cwd: str) -> str:
    """`cwd` when it is absolute, else the bridge's -32602 text."""
    # Node's path.isAbsolute on POSIX: a leading slash.
    if not cwd.startswith("/"):
        raise invalid_params(f"cwd must be an absolute path: {cwd}")
    # JSON can carry a lone surrogate ("\ud800"), a file name cannot: refused before
    # the session log's header is written (docs/contract-notes.md, "Hardening").
    if lone := _LONE_SURROGATE.search(cwd):
        raise invalid_params(f"cwd contains a lone surrogate (U+{ord(lone.group()):04X})")
    return cwd


def no_additional_directories(params: dict[str, Any]) -> None:
    """Refuse `additionalDirectories` (the increment is off in the baseline)."""
    extra = params.get("additionalDirectories")
    if extra is not None and extra != []:
        raise invalid_params("additionalDirectories is not supported")
