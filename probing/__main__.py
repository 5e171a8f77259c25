"""``python -m probing`` (and ``torchrun -m probing``) runs the command line."""

import sys

from probing.cli import main

sys.exit(main())
