"""Minimal pairs: two inputs that differ a little, side by side. Both predictions and their
difference, attention of one head for each, and A − B where the token lists line up."""

from __future__ import annotations

import difflib

import streamlit as st

from model.training.checkpoint import default_dir
from pages.runs import (
    INPUT_NAMES,
    KINDS,
    SHORT,
    TASK_NAMES,
    TASKS,
    axis_tokens,
    input_ok,
    limit,
    points,
    read_input,
    run_plain,
    window,
)
from pages.shared.display import export_view_button, output_text, show_figure
from pages.shared.models import device, require_checkpoint
from pages.shared.state import bounded, init_state, keep_valid, sync_url
from pages.shared.text import listing
from viz.compare import difference_heatmap, distribution_bars, pair_heatmaps

DEFAULT_PAIRS = {
    "classifier": ("a good film", "not a good film"),
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


def predictions(task: str, a: dict, b: dict) -> list:
    """Both predictions and their difference; returns the figures drawn."""
    if task == "translator":
        left, right = st.columns(2)
        for col, name, r in ((left, "A", a), (right, "B", b)):
            col.markdown(f"**{name}** translates to")
            output_text(r["text"] or "(no words)", col)
        words_a, words_b = a["text"].split(), b["text"].split()
        if words_a == words_b:
            st.caption("The two translations are the same.")
        else:
            ops = difflib.SequenceMatcher(a=words_a, b=words_b).get_opcodes()
            only_a = [w for tag, i0, i1, _, _ in ops if tag != "equal" for w in words_a[i0:i1]]
            only_b = [w for tag, _, _, j0, j1 in ops if tag != "equal" for w in words_b[j0:j1]]
            st.caption(
                f"Words only in A: {listing(only_a) or '(none)'} · words only in B: {listing(only_b) or '(none)'}"
            )
        return []
    if task == "classifier":
        last = list(a["probs"])[-1]  # "positive" for sentiment
        cols = st.columns(3)
        for col, name, r in zip(cols, NAMES, (a, b)):
            col.metric(name, r["label"], f"{max(r['probs'].values()):.1%} confident", delta_color="off")
        flips = "same label" if a["label"] == b["label"] else "the label flips"
        cols[2].metric(f"B − A: P({last})", points(b["probs"][last] - a["probs"][last]), flips, delta_color="off")
        fig = distribution_bars(
            a["probs"], b["probs"], names=NAMES, top=None, title="class probabilities", x_title="class"
        )
    else:
        shown = sorted(a["probs"], key=lambda c: -max(a["probs"][c], b["probs"][c]))[:10]
        biggest = max(shown, key=lambda c: abs(b["probs"][c] - a["probs"][c]))
        st.caption(
            f"Likeliest next character: A {listing([a['label']])} ({a['probs'][a['label']]:.1%}), "
            f"B {listing([b['label']])} ({b['probs'][b['label']]:.1%}). Largest change among the bars: "
            f"{listing([biggest])} by {b['probs'][biggest] - a['probs'][biggest]:+.1%} (B − A)."
        )
        fig = distribution_bars(
            a["probs"], b["probs"], names=NAMES, title="next character: top 10 for A and B", x_title="next character"
        )
    show_figure(fig, "pair-prediction", html_name=f"pairs-{task}-prediction.html")
    return [fig]


@st.fragment
def attention(task: str, a: dict, b: dict, figs: list, notes: str) -> None:
    kinds = list(KINDS[task])
    init_state("pair_kind", kinds[-1])
    keep_valid("pair_kind", kinds, kinds[-1])
    if len(kinds) > 1:
        st.radio("Attention", kinds, key="pair_kind", horizontal=True, format_func=lambda k: KINDS[task][k][0])
    kind = st.session_state["pair_kind"]
    att_a, att_b = a["attention"][kind], b["attention"][kind]
    L, H = att_a.shape[:2]
    init_state("pair_layer", 0, bounded(0, L - 1))
    init_state("pair_head", 0, bounded(0, H - 1))
    keep_valid("pair_layer", range(L), 0)
    keep_valid("pair_head", range(H), 0)
    left, right = st.columns(2)
    left.selectbox("Layer", range(L), key="pair_layer", format_func=lambda l: f"layer {l}")
    right.selectbox("Head", range(H), key="pair_head", format_func=lambda h: f"head {h}")
    layer, head = st.session_state["pair_layer"], st.session_state["pair_head"]
    name, query_name, key_name, _ = KINDS[task][kind]
    axes = dict(query_name=query_name, key_name=key_name)

    (ma, cut_a), (mb, cut_b) = window(att_a[layer, head], task), window(att_b[layer, head], task)
    tok_a = tuple(t[cut_a] for t in axis_tokens(a, task, kind))
    tok_b = tuple(t[cut_b] for t in axis_tokens(b, task, kind))
    if task == "generator" and (cut_a != slice(None) or cut_b != slice(None)):
        st.caption("The last 40 characters of each prompt are drawn.")
    side = pair_heatmaps(
        ma, tok_a, mb, tok_b, names=NAMES, title=f"{name}, layer {layer} · head {head}: A and B", **axes
    )
    show_figure(side, "pair-side", html_name=f"pairs-{task}-layer{layer}-head{head}.html")

    aligned = all(len(x) == len(y) for x, y in zip(tok_a, tok_b))
    if aligned:
        labels = tuple([x if x == y else f"{x}→{y}" for x, y in zip(xs, ys)] for xs, ys in zip(tok_a, tok_b))
        st.caption("A and B have the same number of tokens, so their attention subtracts position by position.")
        second = difference_heatmap(
            mb - ma, *labels, title=f"B − A: {name.lower()}, layer {layer} · head {head}", value="B − A", **axes
        )
        show_figure(second, "pair-diff", html_name=f"pairs-{task}-difference.html")
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
        second = pair_heatmaps(
            mean_a, tok_a, mean_b, tok_b, names=NAMES, title=f"{name}, layer {layer}: mean over the {H} heads", **axes
        )
        show_figure(second, "pair-mean")
    export_view_button([*figs, side, second], f"Minimal pair · {TASK_NAMES[task]}", "pair-export", notes=notes)
    sync_url("pair_kind", "pair_layer", "pair_head")


st.title("Minimal pairs")
st.caption(
    "Change one word (or character) and compare: how the prediction moves, and how the attention of one head "
    "differs between the two inputs."
)
init_state("pair_model", "classifier", lambda raw: TASKS[TASKS.index(raw)])
st.radio("Model", TASKS, key="pair_model", horizontal=True, format_func=TASK_NAMES.get)
task = st.session_state["pair_model"]
sync_url("pair_model")
ck = require_checkpoint(task)
raw = inputs(task)
texts = [read_input(task, t, f"input {n}") for t, n in zip(raw, NAMES)]
if None in texts:
    st.stop()
results = [run_plain(str(default_dir(task)), device(), task, t) for t in texts]
for r, n in zip(results, NAMES):
    if "error" in r:
        st.warning(f"Nothing to compare: input {n}: {r['error']}.")
        st.stop()
if not all([input_ok(task, r, limit=limit(task, ck), what=f"input {n}") for r, n in zip(results, NAMES)]):
    st.stop()
a, b = results
st.subheader("Predictions")
figs = predictions(task, a, b)
notes = f"Model: {TASK_NAMES[task]}\nA: {texts[0]}\nB: {texts[1]}\n"
notes += (
    f"A translates to: {a['text']}\nB translates to: {b['text']}"
    if task == "translator"
    else f"Prediction A: {a['label']} ({max(a['probs'].values()):.1%})\n"
    f"Prediction B: {b['label']} ({max(b['probs'].values()):.1%})"
)
st.subheader("Attention of one head, A and B")
attention(task, a, b, figs, notes)
