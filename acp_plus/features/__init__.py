"""The acp-plus increments (docs/contract.md §6), one module each, and the switch over them.

One switch decides whether an increment exists at all: `Config.increments`, True in the
`plus` profile (the default) and False in the `native` profile, where the wire is exactly
native dsh-acp's (no `loadSession`, no `additionalDirectories`, no `modes`, no
`available_commands_update`, no steering `_meta`; the increments' methods answer -32601
as in native). Two increments also have their own flag, which narrows the plus profile
the way the reference acp-plus's `enableSessionLoad` / `enableAdditionalDirectories` do
(§1.2): `enabled` is the one question every feature asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_plus.settings.config import Config

# Increment name -> the Config flag that narrows it in the plus profile (None: no flag).
INCREMENTS: dict[str, str | None] = {
    "session_load": "enable_session_load",  # §6.1
    "additional_directories": "enable_additional_directories",  # §6.2
    "modes": None,  # §6.3
    "commands": None,  # §6.4
    "elicitation": None,  # §6.5
    "steering": None,  # §6.6
    "default_model": None,  # §6.7
    # Guard, backups, ledger, reviewer (docs/approvals.md): on only where `[approvals]`
    # configures something (`ApprovalSettings.active`, checked by features/wiring.py).
    "approvals": None,
}


def enabled(config: Config, name: str) -> bool:
    """Whether increment `name` is on: the plus profile, and its flag when it has one.

    An unknown name raises `ValueError`, so a typo can never silently turn a feature off.
    """
    if name not in INCREMENTS:
        raise ValueError(f"unknown acp-plus increment: {name!r}")
    if not config.increments:
        return False
    flag = INCREMENTS[name]
    return flag is None or bool(getattr(config, flag))
