"""``python -m probing`` (and ``torchrun -m probing``) runs the command line."""

import sys

from .cli import main

sys.exit(main())
