"""Classroom rooms without a store: the package's import floor, join codes and nicknames. Every rule
of the stores themselves, run against each store, is in ``tests/test_room_contract.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rooms.rules import RoomError, clean_nickname, normalise_code


def reason(fn, *args) -> str:
    with pytest.raises(RoomError) as e:
        fn(*args)
    return e.value.reason


# ---- the package's floor ---------------------------------------------------------------------------


@pytest.mark.parametrize("module", ["rooms.store", "rooms.sqlite_store", "rooms.redis_store", "rooms.summary"])
def test_the_room_store_imports_no_ml_stack(module):
    """A room server (de)serialises questions as plain JSON: importing a store, in a fresh interpreter,
    loads neither torch nor the ``model`` package (nor streamlit)."""
    probe = f"import sys, {module}; print(sorted({{m.split('.')[0] for m in sys.modules}} & {{'torch', 'model', 'streamlit'}}))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=Path(__file__).parents[1], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ---- codes and nicknames -------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["", "abc", "ABCDEFG", "ABC1O0", "<b>hi</b>", "x" * 5000, None])
def test_bad_codes_are_not_found(raw):
    assert reason(normalise_code, raw) == "not_found"


def test_codes_are_normalised():
    assert normalise_code(" abc-234 ") == "ABC234"


@pytest.mark.parametrize("raw", ["<script>alert(1)</script>", "a" * 5000, "**bold**", "x\x00y", "[link](http://e)"])
def test_bad_nicknames_are_refused_without_echo(raw):
    with pytest.raises(RoomError) as e:
        clean_nickname(raw)
    assert e.value.reason == "nickname" and raw[:5] not in str(e.value)


@pytest.mark.parametrize(
    "raw, says",
    [
        ("<b>Ann</b>", ["letters, digits, spaces"]),
        ("<script>alert(1)</script>", ["letters, digits, spaces"]),  # 25 characters: the markup is named too
        ("n" * 30, ["at most 24 characters: this one has 30"]),
        ("<b>" + "Ann" * 8 + "</b>", ["letters, digits, spaces", "this one has 31"]),
    ],
)
def test_a_refused_nickname_says_what_is_wrong(raw, says):
    with pytest.raises(RoomError) as e:
        clean_nickname(raw)
    assert all(s in str(e.value) for s in says), str(e.value)
    assert ("letters, digits" in str(e.value)) == ("<" in raw)


def test_good_nicknames():
    assert clean_nickname("  José   Ñ  ") == "José Ñ"
    assert clean_nickname("李雷") == "李雷" and clean_nickname("") == "" and clean_nickname("o'neil-2") == "o'neil-2"
