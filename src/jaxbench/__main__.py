"""``python -m jaxbench``: the command line, as the ``jaxbench`` script runs it."""

import sys

from jaxbench.cli import main

sys.exit(main())
