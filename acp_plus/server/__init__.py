"""The ACP method table and the stdio entry: what sits above the core and the increments.

`stdio.run_stdio` serves one connection; `methods.Server` maps each ACP method to its
handler; `restore` brings a stored session back (resume, load); `activation` brings a
session live. These modules import the core, the features and the wire modules of
`acp_plus`; nothing below imports them.
"""
