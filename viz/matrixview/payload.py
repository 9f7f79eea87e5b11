"""What the matrix view draws: a 2-D array and its labels as one JSON-able dict.

:func:`matrix_payload` gives the values, the labels as display text (:func:`viz.common.printable`:
no control character reaches the page; ``matrixview.js`` writes them with ``textContent``), and the
colour rule: a scale as stops (the attention weights' :data:`viz.common.WEIGHT_STOPS`, or a diverging
one for signed values) with its range, or, for the reshape steps, one colour per head.
:func:`matrix_panels` puts several under tabs. Nothing here imports streamlit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from viz.common import HEAD_COLORS, WEIGHT_STOPS, check_matrix, printable, to_numpy
from viz.matrix import auto_decimals, index_labels, shape_title

MAX_CELLS = 20_000  # a table cell per value: more would be slow to lay out, and unreadable anyway
BLUES = WEIGHT_STOPS  # unsigned values: the attention weights' scale, so a weight reads alike in every view
RDBU_R = (
    "#053061",
    "#2166ac",
    "#4393c3",
    "#92c5de",
    "#d1e5f0",
    "#f7f7f7",
    "#fddbc7",
    "#f4a582",
    "#d6604d",
    "#b2182b",
    "#67001f",
)
NO_HEAD_COLOR = "#D9D9D9"


def matrix_payload(
    values,
    rows: Sequence[str] | None = None,
    cols: Sequence[str] | None = None,
    *,
    name: str = "matrix",
    row_title: str = "row",
    col_title: str = "column",
    decimals: int | str = "auto",
    signed: bool | None = None,
    shape: Sequence[int] | None = None,
    heads: np.ndarray | None = None,
    head_count: int = 0,
    colour: str = "value",
    row_scale: bool = False,
    marks: Sequence[tuple[int, int]] = (),
    mark_label: str = "",
    limits: tuple[float | None, float | None] = (None, None),
) -> dict[str, Any]:
    """What the matrix view draws: ``values`` (2-D) with ``rows``/``cols`` labels (default: indices).

    The title names the matrix and its ``shape`` (default: the grid's; a 4-D tensor drawn as 2-D
    passes its own). Colour: ``"value"`` (a sequential scale from min(0, min) to max |value|, or a
    diverging one centred on 0 when ``signed``, by default when any value is negative), ``"head"``
    (``heads`` gives each cell's head, -1 for none, ``head_count`` how many there are) or ``"none"``
    (plain numbers, e.g. ids). ``row_scale`` colours each row on its own range (rows of different
    units, e.g. a score and a weight). ``decimals``: "auto" gives 4 while narrow, fewer when wide.
    ``marks`` are (row, column) cells drawn with a dashed outline, named ``mark_label`` in the legend
    and the hover readout (e.g. the chosen head, the heads switched off). ``limits`` fixes the colour
    range's low and high end (None: from the data), so matrices side by side or of different inputs
    read alike. A NaN or infinite value is a blank cell ("no value"), outside the colour range.
    """
    m = check_matrix(values, rows, cols, name=name).astype(np.float64)
    n_rows, n_cols = m.shape
    if m.size > MAX_CELLS:
        raise ValueError(f"{name}: {m.size:,} values are too many for a table (at most {MAX_CELLS:,})")
    if colour not in ("value", "head", "none"):
        raise ValueError(f"colour must be 'value', 'head' or 'none', not {colour!r}")
    if decimals == "auto":
        decimals = auto_decimals(min(n_rows, 45), min(n_cols, 32)) or 1  # a table scrolls: always print
    payload: dict[str, Any] = {
        "title": shape_title(name, tuple(shape or m.shape)),
        "row_title": row_title,
        "col_title": col_title,
        "rows": _labels(rows, n_rows),
        "cols": _labels(cols, n_cols),
        "values": [round(float(x), 6) if np.isfinite(x) else None for x in m.ravel()],
        "shape": [n_rows, n_cols],
        "decimals": int(decimals),
        "colour": _colour(
            m, colour, signed=signed, heads=heads, head_count=head_count, row_scale=row_scale, limits=limits
        ),
        "marks": _marks(marks, m.shape),
        "mark_label": printable(mark_label),
    }
    payload["digest"] = hashlib.sha1(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
    return payload


def matrix_panels(
    panels: Mapping[str, dict[str, Any]], *, heading: str = "", code: str = "", note: str = ""
) -> dict[str, Any]:
    """Several matrices in one bordered view, one shown at a time, switched by tabs in the browser (no
    rerun): e.g. a step's queries, keys and values. ``panels`` maps each tab's label to a
    :func:`matrix_payload` (one panel: no tabs). Above them: ``heading`` in bold, ``code`` in a fixed
    font (e.g. a shape) and ``note`` in small type, all plain text."""
    if not panels:
        raise ValueError("matrix_panels needs at least one panel")
    out = [{**payload, "label": label} for label, payload in panels.items()]
    digest = hashlib.sha1("".join([heading, code, note, *(p["digest"] for p in out)]).encode()).hexdigest()[:16]
    return {"panels": out, "heading": heading, "code": code, "note": note, "digest": digest}


def _marks(marks: Sequence[tuple[int, int]], shape: tuple[int, int]) -> list[list[int]]:
    out = sorted({(int(i), int(j)) for i, j in marks})
    bad = [c for c in out if not (0 <= c[0] < shape[0] and 0 <= c[1] < shape[1])]
    if bad:
        raise ValueError(f"marked cells {bad} are outside the {shape[0]} × {shape[1]} matrix")
    return [list(c) for c in out]


def _labels(labels: Sequence[str] | None, n: int) -> list[str]:
    return [printable(str(t)) for t in labels] if labels is not None else index_labels(n)


def _colour(
    m: np.ndarray, mode: str, *, signed, heads, head_count: int, row_scale: bool, limits=(None, None)
) -> dict[str, Any]:
    """The colour rule as the script applies it: stops and a range per matrix (or per row), or one
    colour per head."""
    if mode == "none":
        return {"mode": "none"}
    if mode == "head":
        lab = to_numpy(heads).astype(int) if heads is not None else None
        if lab is None or lab.shape != m.shape:
            raise ValueError(
                f"head colouring needs one head per cell: {None if lab is None else lab.shape} vs {m.shape}"
            )
        if head_count < 1 or lab.max(initial=-1) >= head_count:
            raise ValueError(f"heads use head {lab.max(initial=-1)} but head_count is {head_count}")
        return {
            "mode": "head",
            "heads": lab.ravel().tolist(),
            "palette": [HEAD_COLORS[i % len(HEAD_COLORS)] for i in range(head_count)],
            "none": NO_HEAD_COLOR,
        }
    signed = bool((m < 0).any()) if signed is None else signed
    ranges = [_range(row, signed) for row in m] if row_scale else [_range(m, signed)]
    low, high = limits
    ranges = [[r[0] if low is None else float(low), r[1] if high is None else float(high)] for r in ranges]
    if any(hi <= lo for lo, hi in ranges):
        raise ValueError(f"the colour range must grow from low to high, not {limits}")
    return {"mode": "value", "stops": list(RDBU_R if signed else BLUES), "ranges": ranges, "signed": signed}


def _range(m: np.ndarray, signed: bool) -> list[float]:
    """[low, high] of the colour scale: symmetric about 0 when signed, else from min(0, min) to max."""
    m = m[np.isfinite(m)]
    if not m.size:
        return [0.0, 1.0]
    top = float(np.abs(m).max())
    if signed:
        return [-top or -1.0, top or 1.0]
    low = min(0.0, float(m.min()))
    return [low, max(float(m.max()), low + 1e-12)]
