"""Minimal pairs: two inputs that differ a little, side by side. Both predictions and their
difference, attention of one head for each, and A − B where the token lists line up."""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from model.core.checkpoint import Checkpoint
from model.core.results import AttentionKind, RunResult
from model.core.specs import ModelSpec
from model.zoo import model_entry
from pages import heading
from pages.explore.compare import layer_means
from pages.shared.display import export_view_button, show_matrix
from pages.shared.explorer import attention_explorer
from pages.shared.models import require_checkpoint
from pages.shared.outputs import has_bars, pair_predictions, prediction_bars
from pages.shared.runs import attempt, input_notes, pick_model, read_input, run_model
from pages.shared.state import url_widget
from pages.shared.views import labelled, pick_head, pick_kind, windowed
from viz.common import head_name
from viz.compare import difference_heatmap, difference_table, pair_heatmaps, pair_labels, pair_tables

NAMES = ("A", "B")
VERSUS = " for A and B"  # the end of the bars' title


@dataclass(frozen=True)
class Options:
    texts: tuple[str, str]  # A and B as typed


def options(spec: ModelSpec) -> Options:
    """The two inputs, side by side."""
    columns, defaults = st.columns(2), model_entry(spec.name).examples.pair
    keys = [f"pair_{spec.short}_{n.lower()}" for n in NAMES]
    boxes = zip(columns, NAMES, keys, defaults)
    texts = [url_widget(column.text_input, f"{n}: {spec.input_name}", k, d) for column, n, k, d in boxes]
    return Options(tuple(texts))


@st.fragment
def attention(spec: ModelSpec, a: RunResult, b: RunResult, notes: str) -> None:
    kind = pick_kind(a, "pair_kind", last=True)
    ka, kb = a.kinds[kind], b.kinds[kind]
    L, H = ka.weights.shape[:2]
    layer, head = pick_head(L, H, "pair")
    name, names = ka.title, dict(query_name=ka.query_axis, key_name=ka.key_axis)
    ma, tok_a = windowed(ka.weights[layer, head], ka, a, spec)
    mb, tok_b = windowed(kb.weights[layer, head], kb, b, spec)
    if len(tok_a[0]) < len(ka.queries) or len(tok_b[0]) < len(kb.queries):
        st.caption(f"The last {spec.window} {spec.unit} of each prompt are drawn.")
    head_title = f"{name.lower()}, {head_name(layer, head)}"
    tables = pair_tables(ma, tok_a, mb, tok_b, names=NAMES, title=head_title, **names)
    for col, table, n in zip(st.columns(2), tables, NAMES):
        with col:
            show_matrix(table, f"pair-side-{n}")

    labels = pair_labels(tok_a, tok_b)
    if labels is not None:
        st.caption("A and B have the same number of tokens, so their attention subtracts position by position.")
        second_title = f"B − A: {name.lower()}, {head_name(layer, head)}"
        show_matrix(difference_table(mb - ma, *labels, title=second_title, **names), "pair-diff")
        second = lambda: difference_heatmap(mb - ma, *labels, title=second_title, value="B − A", **names)
    else:
        second = layer_means(spec, (a, b), kind, layer, (tok_a, tok_b), NAMES, names)

    def figures() -> list:  # the export's charts, built only when it is clicked
        figs = [prediction_bars(spec, (a, b), NAMES, VERSUS)] if has_bars(spec) else []
        side_title = f"{name}, {head_name(layer, head)}: A and B"
        return [*figs, pair_heatmaps(ma, tok_a, mb, tok_b, names=NAMES, title=side_title, **names), second()]

    export_view_button(figures, f"Minimal pair · {spec.title}", "pair-export", notes=notes)


def body(ck: Checkpoint, opts: Options) -> None:
    """Both runs: their predictions, one head of each and the difference, and both in one explorer."""
    spec = ck.spec
    texts = [read_input(spec, t, f"input {n}") for t, n in zip(opts.texts, NAMES)]
    if None in texts:
        return
    results = [attempt(run_model, ck, t, what=f"Nothing to compare: input {n}") for t, n in zip(texts, NAMES)]
    if None in results or not all([input_notes(r, f"input {n}") for r, n in zip(results, NAMES)]):
        return
    a, b = results
    st.subheader("Predictions")
    pair_predictions(spec, a, b, NAMES, VERSUS)
    notes = f"Model: {spec.title}\nA: {texts[0]}\nB: {texts[1]}\nA: {a.prediction}\nB: {b.prediction}"
    st.subheader("One head, A and B, and their difference")
    attention(spec, a, b, notes)
    st.subheader("A and B, every layer and head")
    st.caption(
        "One explorer holds both inputs: its tabs switch between A and B and keep the layer, head and view, and "
        "its colours run from 0 to 1 for both, so a colour is the same weight in A and in B."
    )
    attention_explorer(both(a, b), key="pair-explorer", url_prefix="pairx", title="Minimal pair", scale="abs")


def both(a: RunResult, b: RunResult) -> list[AttentionKind]:
    """A's kinds, then B's, for one explorer: each named and titled by its input ("A: self-attention")."""
    return [
        replace(kind, name=f"{n}_{kind.name}", title=f"{n}: {kind.title}")
        for n, result in zip(NAMES, (a, b))
        for kind in labelled(result)
    ]


def main() -> None:
    st.title(heading("pairs"))
    st.caption(
        "Change one word (or character) and compare: how the prediction moves, and how the attention of one head "
        "differs between the two inputs."
    )
    ck = require_checkpoint(pick_model("pair_model"))
    body(ck, options(ck.spec))


main()
