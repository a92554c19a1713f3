"""Views: a transcript -> the normalized, snapshot-ready view of one run (plain data).

`normalize` lays the view out, with `tokens` (positional ids, machine paths, dates),
`ownership` (which step each frame belongs to, also used by conformance), `entries`
(one frame -> its entry), `semantic` (the profile for unlike agents) and `masks`;
`dump` is the view as snapshot YAML, `model_view` the `parity show --model` part, and
`calibrate` proposes masks from repeated runs. The public surface below loads on first
use (`parity.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parity.lazy import surface

if TYPE_CHECKING:
    from parity.view.dump import dump_view, load_view
    from parity.view.normalize import PROFILES, view
    from parity.view.ownership import frame_steps

__all__ = [
    "PROFILES",
    "dump_view",
    "frame_steps",
    "load_view",
    "view",
]

__getattr__ = surface(
    __name__,
    {
        "dump_view": "parity.view.dump",
        "load_view": "parity.view.dump",
        "PROFILES": "parity.view.normalize",
        "view": "parity.view.normalize",
        "frame_steps": "parity.view.ownership",
    },
)
