"""The command line, one module per command (``python -m model <command>``): each has ``add(sub, tasks)``, which
registers its parser, and ``run(args)``."""
