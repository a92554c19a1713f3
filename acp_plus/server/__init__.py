"""The ACP method table and the stdio entry: the top layer (acp_plus/ARCHITECTURE.md).

`stdio.run_stdio` serves one connection; `methods.Server` maps each ACP method to its
handler; `restore` brings a stored session back (resume, load); `activation` brings a
session live. These modules import every layer below (`features/`, `live/`,
`settings/`, `protocol/`, `wire/`, `core/`); nothing below imports them.
"""
