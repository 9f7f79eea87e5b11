"""What the plain-matrix views share (embeddings, weight matrices, scores, weights): axis names,
index labels, titles with shapes, how many decimals fit, and the matrix as a table.

The views themselves are drawn by :mod:`viz.matrixview`; every one states its shape in the title
("scores  (6 × 6)") and names both axes (query rows, key columns where that applies).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from viz.common import check_matrix

QUERY_AXIS, KEY_AXIS = "query (row)", "key (column)"
MAX_TEXT_ROWS, MAX_TEXT_COLS = 45, 32  # beyond these, no decimals fit (the matrix view caps its sizes at these)


def index_labels(n: int, prefix: str = "") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def shape_title(name: str, shape: Sequence[int]) -> str:
    """``"scores  (6 × 6)"``."""
    return f"{name}  ({' × '.join(str(n) for n in shape)})"


def auto_decimals(n_rows: int, n_cols: int) -> int | None:
    """How many decimals fit in a cell: 4 for narrow matrices, fewer for wide, None for big ones.
    Width decides, since the text runs across the cell."""
    if n_rows > MAX_TEXT_ROWS or n_cols > MAX_TEXT_COLS:
        return None
    if n_cols <= 10:
        return 4
    return 2 if n_cols <= 20 else 1


def matrix_frame(
    values, rows: Sequence[str] | None = None, cols: Sequence[str] | None = None, *, decimals: int = 4
) -> pd.DataFrame:
    """The matrix as a rounded DataFrame with the same labels (raw, unescaped: tables are not HTML)."""
    m = check_matrix(values, rows, cols, name="matrix")
    return pd.DataFrame(
        np.round(m, decimals),
        index=list(rows) if rows is not None else index_labels(m.shape[0]),
        columns=list(cols) if cols is not None else index_labels(m.shape[1]),
    )
