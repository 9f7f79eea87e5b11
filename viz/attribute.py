"""Contributions beside attention for one query row: the methods side by side over the same keys, and
how far each one ranks the keys as attention does (:class:`model.analysis.attribute.Attribution`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.common import escape, heatmap, plot_labels, printable

LABELS = {
    "attention": "attention (mean of heads)",
    "norm_layer": "‖Σ a·f(x)‖ norm (Kobayashi 2020)",
    "value_zeroing": "value zeroing (Mohebbi 2023)",
    "rollout": "rollout up to this layer (Abnar & Zuidema 2020)",
    "grad_attention": "|a ⊙ ∂score/∂a| (mean of heads)",
    "norm": "‖a·f(x)‖ per head",
}
MEANING = {
    "norm": "how long each head's weighted value vector is: a weight times what the key carries",
    "norm_layer": "the same, the heads summed first: what the layer's attention adds from the key",
    "value_zeroing": "how much the layer's output at the query turns when the key's value is zeroed",
    "rollout": "attention followed through the layers, the residual counted as half",
    "grad_attention": "how much the score would move per unit of weight, times the weight",
}


def contributions_figure(
    shares: Mapping[str, np.ndarray], keys: Sequence[str], *, query: str, layer: int, visible: Sequence[bool]
) -> go.Figure:
    """One row per method, one column per key (the explorer's row for the query), each row's shares of
    the query's total (summing to 1); keys the query cannot see are blank."""
    if not shares:
        raise ValueError("no method to draw: give at least the attention row")
    m = np.stack([np.asarray(v, dtype=float) for v in shares.values()])
    if m.shape[1] != len(keys) or len(visible) != len(keys):
        raise ValueError(f"{m.shape[1]} values per method for {len(keys)} keys and {len(visible)} visibility flags")
    m = np.where(np.asarray(visible, dtype=bool)[None], m, np.nan)
    return heatmap(
        m,
        [LABELS.get(name, name) for name in shares],
        plot_labels(keys),
        title=f"Layer {layer}: what each key gave the query {escape(printable(query))}, by each method",
        row_title="method",
        col_title="key",
        value="share of the row",
        zmin=0.0,
        zmax=1.0,
        decimals=2,
    )


def agreement_frame(agreement: Mapping[str, float], absent: Mapping[str, str]) -> pd.DataFrame:
    """Each method, its Spearman ρ with attention (NaN where a row is constant) and what it measures; the
    absent ones with why."""
    rows = [
        {
            "method": name,
            "Spearman ρ with attention": round(rho, 3) if rho == rho else None,
            "measures": MEANING.get(name, ""),
        }
        for name, rho in agreement.items()
    ]
    rows += [
        {"method": name, "Spearman ρ with attention": None, "measures": f"not shown: {why}"}
        for name, why in absent.items()
    ]
    return pd.DataFrame(rows, columns=["method", "Spearman ρ with attention", "measures"])


def source_share_figure(shares: np.ndarray, words: Sequence[str]) -> go.Figure:
    """``shares`` ``(layers, words)``: per decoder layer, how much of each output word's cross-attention
    output came from the source (1) rather than from the words already written (0)."""
    shares = np.asarray(shares, dtype=float)
    if shares.ndim != 2 or shares.shape[1] != len(words):
        raise ValueError(f"shares of shape {shares.shape} do not fit {len(words)} output words")
    return heatmap(
        shares,
        [f"layer {l}" for l in range(len(shares))],
        plot_labels(words),
        title="How much of each output word came from the source (ALTI, cross-attention sublayer)",
        row_title="decoder layer",
        col_title="output word",
        value="source share",
        zmin=0.0,
        zmax=1.0,
        decimals=2,
    )
