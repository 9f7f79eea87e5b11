"""Flags made from an options dataclass: one ``--flag`` a field, with the field's help, type, choices and check
(its metadata, see :func:`model.training.train.option`), and the values given read back."""

from __future__ import annotations

import argparse
import dataclasses
import json
import types
import typing
from typing import Any


def _value_type(f: dataclasses.Field, owner: type) -> type:
    """The type a field's value has: ``int``, ``float``, ``str`` or ``bool`` (``str | None`` is ``str``)."""
    hint = typing.get_type_hints(owner)[f.name]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    return hint


def flags(cls: type) -> list[tuple[str, type, dataclasses.Field]]:
    """``(flag name, value type, field)`` for each field of ``cls`` that has a flag."""
    out = []
    for f in dataclasses.fields(cls):
        if "help" in f.metadata and f.metadata.get("cli", True):
            out.append((f.metadata.get("flag", f.name.replace("_", "-")), _value_type(f, cls), f))
    return out


def add_flags(parser: argparse.ArgumentParser, cls: type, helps: dict[str, str] | None = None) -> None:
    """One flag a field of ``cls``; each defaults to None (the dataclass's default applies), its help (or
    ``helps[flag]``) says what that default is."""
    for name, typ, f in flags(cls):
        text = (helps or {}).get(name, f.metadata["help"])
        default = f.default if f.default is not dataclasses.MISSING else None
        shown = "" if default in (None, "", False) else f" (default: {default})"
        if typ is bool:
            parser.add_argument(f"--{name}", action="store_true", default=None, help=text)
            continue
        parser.add_argument(
            f"--{name}",
            type=_named(f.metadata["check"], name) if "check" in f.metadata else typ,
            choices=f.metadata.get("choices"),
            default=None,
            help=text + shown,
        )


def _named(check, name: str):
    """``check`` under the flag's name, which argparse's message gives ("invalid freeze value: ...")."""

    def parse(text: str):
        return check(text)

    parse.__name__ = name
    return parse


def given(args: argparse.Namespace, cls: type) -> dict[str, Any]:
    """The fields of ``cls`` whose flags were given, by field name."""
    out = {}
    for name, _, f in flags(cls):
        value = getattr(args, name.replace("-", "_"))
        if value is not None:
            out[f.name] = value
    return out


def key_values(pairs: list[str] | None) -> dict[str, Any]:
    """``KEY=JSON`` pairs as a dict (``dim=128`` gives ``{"dim": 128}``)."""
    out = {}
    for kv in pairs or []:
        key, _, value = kv.partition("=")
        out[key] = json.loads(value)
    return out
