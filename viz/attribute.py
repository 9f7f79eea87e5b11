"""Contributions beside attention for one query row: the methods side by side over the same keys, and
how far each one ranks the keys as attention does (:class:`model.analysis.attribute.Attribution`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.common import escape, heatmap, plot_labels, printable, shown_token

# each method's name on the page, in words (the record's names are the code's: model.analysis.contributions)
LABELS = {
    "attention": "attention (mean of heads)",
    "norm": "weighted-value norm, per head",
    "norm_layer": "weighted-value norm",
    "value_zeroing": "value zeroing",
    "rollout": "rollout up to this layer",
    "grad_attention": "gradient × attention",
}
MEANING = {
    "norm": "how long each head's weighted value vector is: a weight times what the key carries (Kobayashi 2020)",
    "norm_layer": "the same, the heads summed first: what the layer's attention adds from the key (Kobayashi 2020)",
    "value_zeroing": "how much the layer's output at the query turns when the key's value is zeroed (Mohebbi 2023)",
    "rollout": "attention followed through the layers, the residual counted as half (Abnar & Zuidema 2020)",
    "grad_attention": "how much the score would move per unit of weight, times the weight",
}
# the measures the sentence under the chart compares with attention
COMPARED = ("norm_layer", "value_zeroing", "grad_attention")


def method_name(name: str) -> str:
    """A method's name in words: ``"value_zeroing"`` -> ``"value zeroing"``."""
    return LABELS.get(name, name.replace("_", " "))


def layer_sentence(
    shares: Mapping[str, np.ndarray], keys: Sequence[str], visible: Sequence[bool], layer: int, heads: int
) -> str:
    """The sentence under the chart of ``layer``: where, in that layer, attention (the mean of its ``heads``
    heads) and a contribution differ most, from the chart's own rows (``shares``, each summing to 1). Plain
    text (it holds the user's tokens): never markup."""
    where = f"In layer {layer} (the mean of its {heads} heads)" if heads > 1 else f"In layer {layer}"
    att, seen = shares.get("attention"), np.asarray(visible, dtype=bool)
    best = None
    for name in COMPARED:
        if att is None or name not in shares:
            continue
        gap = np.where(seen, np.abs(np.asarray(att) - np.asarray(shares[name])), -1.0)
        key = int(gap.argmax())
        if best is None or gap[key] > best[0]:
            best = (float(gap[key]), name, key)
    if best is None or best[0] <= 0.005:
        return f"{where}, attention and the contributions agree on every key."
    _, name, key = best
    return (
        f"{where}, “{shown_token(keys[key])}” (key {key}) takes {att[key]:.0%} of the attention and "
        f"{shares[name][key]:.0%} of the {method_name(name)} contribution."
    )


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
        [method_name(name) for name in shares],
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
            "method": method_name(name),
            "Spearman ρ with attention": round(rho, 3) if rho == rho else None,
            "measures": MEANING.get(name, ""),
        }
        for name, rho in agreement.items()
    ]
    rows += [
        {"method": method_name(name), "Spearman ρ with attention": None, "measures": f"not shown: {why}"}
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
        title="How much of each output word came from the source (its cross-attention, per decoder layer)",
        row_title="decoder layer",
        col_title="output word",
        value="source share",
        zmin=0.0,
        zmax=1.0,
        decimals=2,
    )
