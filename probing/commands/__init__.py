"""One module per ``probing`` command: ``add_arguments(parser)`` and ``run(args) -> int``."""
