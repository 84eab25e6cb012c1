"""``python -m abstat``: same entry point as the ``abstat`` console script."""

import sys

from abstat.cli import main

sys.exit(main())
