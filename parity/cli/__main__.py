"""`python -m parity.cli`: the `parity` command."""

import sys

from parity.cli.main import main

sys.exit(main())
