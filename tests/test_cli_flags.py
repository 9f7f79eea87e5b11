"""The command line's flags come from the options dataclasses: each training setting is one flag with its
field's help, a flag not given keeps the field's default, and a bad --objective, --pos-init or --freeze is
refused when the command line is read, before any run starts."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

import model.__main__ as cli
from model.cli import train as train_command
from model.core.specs import SPECS
from model.training.train import TrainConfig


def parsers() -> dict[str, argparse.ArgumentParser]:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    for command in cli.COMMANDS:
        command.add(sub, list(SPECS))
    return dict(sub.choices)


def test_every_training_setting_is_a_flag_with_its_fields_help():
    train = parsers()["train"]
    helps = {a.dest: a.help for a in train._actions}
    for f in dataclasses.fields(TrainConfig):
        if f.metadata.get("cli", True):
            dest = f.metadata.get("flag", f.name.replace("_", "-")).replace("-", "_")
            if dest != "data_dir":  # its help names the folder this machine would read
                assert helps[dest].startswith(f.metadata["help"]), f.name


def test_every_argument_of_every_command_says_what_it_is():
    for name, parser in parsers().items():
        bare = [a.dest for a in parser._actions if not isinstance(a, argparse._HelpAction) and not a.help]
        assert not bare, f"{name}: {bare} have no help"


def test_a_plain_train_uses_the_dataclasses_defaults():
    assert not hasattr(cli, "DEFAULTS")
    args = parsers()["train"].parse_args(["classifier"])
    assert train_command.config(args) == TrainConfig(task="classifier")
    args = parsers()["train"].parse_args(["generator", "--lr", "2e-3", "--set", "dim=64", "--keep-snapshots"])
    assert train_command.config(args) == TrainConfig(task="generator", lr=2e-3, keep_snapshots=True, model={"dim": 64})


@pytest.mark.parametrize(
    "flag, value",
    [("--objective", "contrastive"), ("--pos-init", "sinusoid"), ("--freeze", "blocks 0"), ("--freeze", "0.attn")],
)
def test_a_bad_choice_is_refused_when_the_line_is_read(flag: str, value: str, capsys):
    with pytest.raises(SystemExit):
        cli.main(["train", "classifier", flag, value, "--data-dir", "/nowhere"])
    assert flag in capsys.readouterr().err
