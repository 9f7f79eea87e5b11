"""Command line: ``python -m model train|evaluate|average|recipe <task>``, ``python -m model hub <id-or-folder>
"text"``, ``heads``, ``attribute``, ``snapshots``; each command is one module of :mod:`model.cli`."""

from __future__ import annotations

import argparse

from model.cli import attribute, average, evaluate, heads, hub, recipe, snapshots, train
from model.cli.train import TRAIN_OPTIONS  # noqa: F401 - the training flags, as (flag, value type)

COMMANDS = (train, evaluate, average, recipe, hub, snapshots, heads, attribute)


def main(argv: list[str] | None = None) -> None:
    from model.core.specs import SPECS

    parser = argparse.ArgumentParser(prog="python -m model", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add(sub, list(SPECS))
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
