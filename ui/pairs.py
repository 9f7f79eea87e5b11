"""Minimal pairs: two inputs that differ a little, side by side. Both predictions and their
difference, attention of one head for each, and A − B where the token lists line up."""

from __future__ import annotations

import streamlit as st

from model.analysis.compare import largest_change, word_changes
from model.core.results import RunResult
from ui.shared.display import export_view_button, show_figure, show_matrix
from ui.shared.explorer import attention_explorer
from ui.shared.models import require_checkpoint
from ui.shared.outputs import label_metric, outputs_side_by_side
from ui.shared.runs import INPUT_NAMES, SHORT, TASK_NAMES, attempt, input_notes, pick_task, read_input, run_model
from ui.shared.state import init_state, on_request, radio_choice, sync_url
from ui.shared.text import listing, points
from ui.shared.views import axes, labelled, pick_head, window
from viz.attention import visible_chars
from viz.compare import (
    difference_heatmap,
    difference_table,
    distribution_bars,
    pair_heatmaps,
    pair_labels,
    pair_tables,
    visible_probs,
)

DEFAULT_PAIRS = {
    "classifier": ("a good film", "a bad film"),  # one word swapped: the same length, so B − A is drawn
    "generator": ("thy father", "thy mother"),
    "translator": ("ein mann fährt fahrrad .", "eine frau fährt fahrrad ."),
}
NAMES = ("A", "B")


def inputs(task: str) -> tuple[str, str]:
    keys = [f"pair_{SHORT[task]}_{n.lower()}" for n in NAMES]
    for key, default in zip(keys, DEFAULT_PAIRS[task]):
        init_state(key, default)
    left, right = st.columns(2)
    for col, key, name in zip((left, right), keys, NAMES):
        col.text_input(f"{name}: {INPUT_NAMES[task]}", key=key)
    sync_url(*keys)
    return tuple(st.session_state[k] for k in keys)


def prediction_figure(task: str, a: RunResult, b: RunResult):
    """A and B as grouped bars: the class probabilities, or the top ten next characters."""
    if task == "classifier":
        return distribution_bars(a.probs, b.probs, names=NAMES, top=None, title="class probabilities", x_title="class")
    pa, pb = visible_probs(a.probs), visible_probs(b.probs)
    return distribution_bars(pa, pb, names=NAMES, title="next character: top 10 for A and B", x_title="next character")


def predictions(task: str, a: RunResult, b: RunResult) -> None:
    """Both predictions and their difference; the bars open on request."""
    if task == "translator":
        outputs_side_by_side((a, b), [f"**{name}** translates to" for name in NAMES])
        if a.prediction.split() == b.prediction.split():
            st.caption("The two translations are the same.")
        else:
            only_a, only_b = word_changes(a.prediction, b.prediction)
            st.caption(
                f"Words only in A: {listing(only_a) or '(none)'} · words only in B: {listing(only_b) or '(none)'}"
            )
        return
    if task == "classifier":
        last = list(a.probs)[-1]  # "positive" for sentiment
        cols = st.columns(3)
        for col, name, r in zip(cols, NAMES, (a, b)):
            label_metric(col, name, r)
        flips = "same label" if a.prediction == b.prediction else "the label flips"
        cols[2].metric(f"B − A: P({last})", points(b.probs[last] - a.probs[last]), flips, delta_color="off", delta_arrow="off")
    else:
        pa, pb = visible_probs(a.probs), visible_probs(b.probs)
        la, lb = (visible_chars([r.prediction])[0] for r in (a, b))
        biggest = largest_change(pa, pb)
        st.caption(
            f"Likeliest next character: A {listing([la])} ({pa[la]:.1%}), B {listing([lb])} ({pb[lb]:.1%}). "
            f"Largest change among the bars: {listing([biggest])} by {pb[biggest] - pa[biggest]:+.1%} (B − A)."
        )
    bars = on_request("The probabilities of A and B, as bars", "pair_bars")
    if bars.open:
        with bars:
            show_figure(prediction_figure(task, a, b), "pair-prediction", html_name=f"pairs-{task}-prediction.html")


@st.fragment
def attention(task: str, a: RunResult, b: RunResult, notes: str) -> None:
    kinds = list(a.kinds)
    kind = radio_choice("pair_kind", kinds, kinds[-1], label="Attention", format_func=lambda k: a.kinds[k].title)
    ka, kb = a.kinds[kind], b.kinds[kind]
    att_a, att_b = ka.weights, kb.weights
    L, H = att_a.shape[:2]
    layer, head = pick_head(L, H, "pair")
    name = ka.title
    names = dict(query_name=ka.query_axis, key_name=ka.key_axis)

    (ma, cut_a), (mb, cut_b) = window(att_a[layer, head], task), window(att_b[layer, head], task)
    tok_a = tuple(t[cut_a] for t in axes(ka, a))
    tok_b = tuple(t[cut_b] for t in axes(kb, b))
    if task == "generator" and (cut_a != slice(None) or cut_b != slice(None)):
        st.caption("The last 40 characters of each prompt are drawn.")
    head_title = f"{name.lower()}, layer {layer} · head {head}"
    for col, table, n in zip(st.columns(2), pair_tables(ma, tok_a, mb, tok_b, names=NAMES, title=head_title, **names), NAMES):
        with col:
            show_matrix(table, f"pair-side-{n}")

    labels = pair_labels(tok_a, tok_b)
    if labels is not None:
        st.caption("A and B have the same number of tokens, so their attention subtracts position by position.")
        second_title = f"B − A: {name.lower()}, layer {layer} · head {head}"
        show_matrix(difference_table(mb - ma, *labels, title=second_title, **names), "pair-diff")
        second = lambda: difference_heatmap(mb - ma, *labels, title=second_title, value="B − A", **names)
    else:
        size_a, size_b = (" × ".join(str(len(t)) for t in tokens) for tokens in (tok_a, tok_b))
        st.info(
            f"A difference heatmap needs A and B of equal lengths, position by position; here A is "
            f"{size_a} and B is {size_b} (queries × keys). "
            "Below is each one's mean over all heads of the layer instead. Make the two inputs the same "
            "number of tokens (e.g. swap one word for another) to see their difference."
        )
        mean_a, _ = window(att_a[layer].mean(axis=0), task)
        mean_b, _ = window(att_b[layer].mean(axis=0), task)
        mean_title = f"{name.lower()}, layer {layer}: mean over the {H} heads"
        for col, table, n in zip(st.columns(2), pair_tables(mean_a, tok_a, mean_b, tok_b, names=NAMES, title=mean_title, **names), NAMES):  # fmt: skip
            with col:
                show_matrix(table, f"pair-mean-{n}")
        second = lambda: pair_heatmaps(mean_a, tok_a, mean_b, tok_b, names=NAMES, title=f"{name}, layer {layer}: mean over the {H} heads", **names)

    def figures() -> list:  # the export's charts, built only when it is clicked
        figs = [] if task == "translator" else [prediction_figure(task, a, b)]
        side = pair_heatmaps(ma, tok_a, mb, tok_b, names=NAMES, title=f"{name}, layer {layer} · head {head}: A and B", **names)
        return [*figs, side, second()]

    export_view_button(figures, f"Minimal pair · {TASK_NAMES[task]}", "pair-export", notes=notes)
    sync_url("pair_kind", "pair_layer", "pair_head")


st.title("Minimal pairs")
st.caption(
    "Change one word (or character) and compare: how the prediction moves, and how the attention of one head "
    "differs between the two inputs."
)
task = pick_task("pair_model")
ck = require_checkpoint(task)
raw = inputs(task)
texts = [read_input(task, t, f"input {n}") for t, n in zip(raw, NAMES)]
if None in texts:
    st.stop()
results = [attempt(run_model, ck, t, what=f"Nothing to compare: input {n}") for t, n in zip(texts, NAMES)]
if None in results or not all([input_notes(r, f"input {n}") for r, n in zip(results, NAMES)]):
    st.stop()
a, b = results
st.subheader("Predictions")
predictions(task, a, b)
notes = f"Model: {TASK_NAMES[task]}\nA: {texts[0]}\nB: {texts[1]}\n"
notes += f"A: {a.prediction}\nB: {b.prediction}"
st.subheader("A and B, every layer and head")
st.caption("Each explorer holds one input's attention: pick the same kind, layer and head in both to compare.")
for col, r, n in zip(st.columns(2), (a, b), NAMES):
    with col:
        st.markdown(f"**{n}**")
        attention_explorer(labelled(r), key=f"pair-explorer-{n}", url_prefix=f"pair{n}", title=f"Minimal pair {n}")
st.subheader("One head, A and B, and their difference")
attention(task, a, b, notes)
