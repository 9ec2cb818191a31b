"""One module per ``jaxbench`` subcommand (see :mod:`jaxbench.cli`)."""
