"""`python -m pullback` runs the command line."""

import sys

from .cli.command import main

sys.exit(main())
