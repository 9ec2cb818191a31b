import sys

from jaxbench.cli import main

sys.exit(main())
