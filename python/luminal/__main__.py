"""python -m luminal: the same as the `luminal` command."""

import sys

from luminal.cli import main

sys.exit(main())
