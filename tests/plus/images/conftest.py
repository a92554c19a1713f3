"""The image tests reuse the real-process harness of `tests/plus/server`."""

from __future__ import annotations

import sys
from pathlib import Path

# plus_harness lives beside the server tests; those directories are not packages.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
