"""Views: a transcript -> the normalized, snapshot-ready view of one run (plain data).

`normalize` lays the view out, with `tokens` (positional ids, machine paths, dates),
`ownership` (which step each frame belongs to, also used by conformance), `entries`
(one frame -> its entry), `semantic` (the profile for unlike agents) and `masks`;
`dump` is the view as snapshot YAML, `model_view` the `parity show --model` part, and
`calibrate` proposes masks from repeated runs.
"""
