"""Comparing two runs: which words two translations do not share, which outcome moved most."""

from __future__ import annotations

import difflib
from collections.abc import Mapping


def word_changes(a: str, b: str) -> tuple[list[str], list[str]]:
    """The words of ``a`` and of ``b`` outside their longest common word sequence (``difflib``), in order."""
    words_a, words_b = a.split(), b.split()
    ops = difflib.SequenceMatcher(a=words_a, b=words_b).get_opcodes()
    only_a = [w for tag, i0, i1, _, _ in ops if tag != "equal" for w in words_a[i0:i1]]
    only_b = [w for tag, _, _, j0, j1 in ops if tag != "equal" for w in words_b[j0:j1]]
    return only_a, only_b


def largest_change(a: Mapping[str, float], b: Mapping[str, float], *, top: int = 10) -> str:
    """Among the ``top`` outcomes likeliest in either distribution (as the bars draw them), the one whose
    probability moved most from ``a`` to ``b``."""
    if not a and not b:
        raise ValueError("both distributions are empty; give at least one outcome")
    keys = list(dict.fromkeys([*a, *b]))
    shown = sorted(keys, key=lambda k: -max(a.get(k, 0.0), b.get(k, 0.0)))[:top]
    return max(shown, key=lambda k: abs(b.get(k, 0.0) - a.get(k, 0.0)))
