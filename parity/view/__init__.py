"""Views: a transcript -> the normalized, snapshot-ready view of one run (plain data).

`normalize` lays the view out, with `tokens` (positional ids, machine paths, dates),
`ownership` (which step each frame belongs to, also used by conformance), `entries`
(one frame -> its entry), `semantic` (the profile for unlike agents) and `masks`;
`dump` is the view as snapshot YAML, `model_view` the `parity show --model` part, and
`calibrate` proposes masks from repeated runs. The package's public surface is below;
harness code imports each name from the module that defines it.
"""

from parity.view.dump import dump_view, load_view
from parity.view.normalize import PROFILES, view
from parity.view.ownership import frame_steps

__all__ = ["PROFILES", "dump_view", "frame_steps", "load_view", "view"]
