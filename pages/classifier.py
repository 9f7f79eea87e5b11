"""Sentiment classifier: the prediction, attention per layer and head, one head in detail, the head
mean and attention rollout."""

from __future__ import annotations

import numpy as np
import streamlit as st
import torch

from model.analysis.inference import SENTIMENT_LABELS, classify
from model.analysis.maps import attention_rollout, drop_tokens
from model.training.checkpoint import Checkpoint, default_dir
from pages.shared.display import export_view_button, show_figure
from pages.shared.models import device, get_checkpoint, require_checkpoint
from pages.shared.state import bounded, init_state, keep_valid, sync_url, view_choice
from pages.shared.text import clean_text, listing
from viz.attention import attention_heatmap, grid_frame, head_grid, mean_heads_heatmap, query_bar, weights_frame

TASK = "classifier"
DEFAULT_TEXT = "the acting is wonderful but the plot is thin"
EXAMPLES = (
    DEFAULT_TEXT,
    "a moving and beautifully made film",
    "the story is boring and far too long",
    "not bad at all",
    "i loved every minute of it",
    "it is not a good movie",
)
CUSTOM = "(your own sentence)"
URL_KEYS = ("cls_text", "cls_show", "cls_layer", "cls_head", "cls_hide")
VIEWS = {  # one attention view at a time (each is a chart or two to draw)
    "head": "One head in detail",
    "grid": "Every layer and head",
    "mean": "Mean over heads",
    "rollout": "Attention rollout",
}


@st.cache_data(max_entries=64, show_spinner="Classifying…")
def run_classifier(directory: str, dev: str, text: str) -> dict:
    """Plain results (lists and numpy) for one sentence; ``directory`` and ``dev`` key the cache."""
    try:
        r = classify(get_checkpoint(TASK, dev), text)
    except ValueError as e:
        return {"error": str(e)}
    layers = r.attention.encoder
    return {
        "tokens": r.tokens,
        "probs": r.probs,
        "label": r.label,
        "unknown": r.unknown,
        "truncated": r.truncated,
        "attention": torch.stack([w[0] for w in layers]).numpy(),  # (layers, heads, T, T)
        "rollout": attention_rollout(layers)[0].numpy(),
    }


def choose_example() -> None:
    if st.session_state["cls_example"] != CUSTOM:
        st.session_state["cls_text"] = st.session_state["cls_example"]


def controls() -> str | None:
    init_state("cls_text", DEFAULT_TEXT)
    if "cls_example" not in st.session_state:
        st.session_state["cls_example"] = (
            st.session_state["cls_text"] if st.session_state["cls_text"] in EXAMPLES else CUSTOM
        )
    left, right = st.columns([3, 2])
    left.text_input("Sentence (English)", key="cls_text", help="A short movie-review sentence.")
    right.selectbox("Examples", [CUSTOM, *EXAMPLES], key="cls_example", on_change=choose_example)
    sync_url("cls_text")
    return clean_text(st.session_state["cls_text"], what="sentence")


def input_notes(result: dict, max_len: int) -> bool:
    """Tell the user what the model could not read; False when nothing is left to show."""
    if result["truncated"]:
        st.info(f"The model reads at most {max_len} words; only the first {max_len} are used.")
    unknown = sorted(set(result["unknown"]))
    if len(result["unknown"]) == len(result["tokens"]):
        st.warning(
            "None of these words are in the model's vocabulary, so it would only see `<unk>`. "
            "Try an everyday English sentence about a film."
        )
        return False
    if unknown:
        st.warning(f"{len(unknown)} word(s) are not in the vocabulary and were read as `<unk>`: {listing(unknown)}")
    return True


def prediction(result: dict) -> None:
    p = max(result["probs"])
    left, right = st.columns([1, 2])
    left.metric("Prediction", result["label"], f"{p:.1%} confident", delta_color="off")
    labels = SENTIMENT_LABELS if len(result["probs"]) == 2 else [str(i) for i in range(len(result["probs"]))]
    for label, prob in zip(labels, result["probs"]):
        right.progress(float(prob), text=f"{label}: {prob:.1%}")


def hide(weights: np.ndarray, keep: list[bool]) -> np.ndarray:
    return drop_tokens(torch.from_numpy(weights), keep).numpy()


@st.fragment
def attention_views(result: dict) -> None:
    att, rollout = result["attention"], result["rollout"]
    L, H = att.shape[:2]
    unknown = set(result["unknown"])
    tokens = [f"{t} (unk)" if t in unknown else t for t in result["tokens"]]
    init_state("cls_hide", False, lambda raw: raw == "True")
    st.subheader("Attention")
    st.toggle(
        "Hide special tokens and renormalise",
        key="cls_hide",
        help="Removes <unk> and <pad> rows and columns, then rescales each row to sum to 1 again.",
    )
    if st.session_state["cls_hide"] and unknown:
        keep = [t not in unknown for t in result["tokens"]]
        att, rollout = hide(att, keep), hide(rollout, keep)
        tokens = [t for t, k in zip(tokens, keep) if k]
        st.caption("Unknown words (`<unk>`) are hidden; each row is rescaled over the words that remain.")
    elif st.session_state["cls_hide"]:
        st.caption("This sentence has no special tokens to hide.")

    show = view_choice("cls_show", VIEWS, help="One view at a time, so a new sentence redraws one chart, not five.")
    init_state("cls_layer", 0, bounded(0, L - 1))
    init_state("cls_head", 0, bounded(0, H - 1))
    keep_valid("cls_layer", range(L), 0)
    keep_valid("cls_head", range(H), 0)
    if show in ("head", "mean"):
        left, right = st.columns(2)
        left.selectbox("Layer", range(L), key="cls_layer", format_func=lambda l: f"layer {l}")
        if show == "head":
            right.selectbox("Head", range(H), key="cls_head", format_func=lambda h: f"head {h}")
    layer, head = st.session_state["cls_layer"], st.session_state["cls_head"]

    def grid():
        return head_grid(att, tokens, title="attention per layer and head")

    def one():
        return attention_heatmap(att[layer, head], tokens, title=f"layer {layer} · head {head}")

    def mean():
        return mean_heads_heatmap(att[layer], tokens, title=f"layer {layer}: mean over the {H} heads")

    def rolled():
        return attention_heatmap(rollout, tokens, title=f"attention rollout through {L} layers")

    def reach():
        return query_bar(
            rollout.mean(axis=0),
            tokens,
            query_label="the sentence (mean of all positions)",
            title="how much each word reaches the pooled sentence vector that the classifier reads",
        )

    if show == "grid":
        st.caption(
            f"{L} layers × {H} heads. Each small heatmap is one head: row = the query word, column = the key "
            "word it attends to."
        )
        show_figure(grid(), "cls-grid", csv=grid_frame(att, tokens), csv_name="classifier-all-heads.csv")
    elif show == "head":
        show_figure(
            one(),
            "cls-head",
            csv=weights_frame(att[layer, head], tokens),
            csv_name=f"classifier-layer{layer}-head{head}.csv",
        )
    elif show == "mean":
        show_figure(mean(), "cls-mean")
    else:
        st.caption(
            "Rollout (Abnar & Zuidema, 2020) follows attention through all layers: average the heads, add the "
            "residual connection (the identity), rescale rows, multiply layer by layer. Row i: how much of each "
            "input word reaches position i at the top."
        )
        show_figure(rolled(), "cls-rollout")
        show_figure(reach(), "cls-rollout-bar")
    notes = f"Sentence: {' '.join(result['tokens'])}\nPrediction: {result['label']} ({max(result['probs']):.1%})"
    export_view_button(
        lambda: [grid(), one(), mean(), rolled(), reach()], "Sentiment classifier", "cls-export", notes=notes
    )
    sync_url("cls_show", "cls_hide", "cls_layer", "cls_head")


@st.fragment
def page_body(ck: Checkpoint) -> None:
    """Everything that depends on the sentence, as one fragment: a new sentence reruns this, not the
    router and the sidebar (fewer messages to send and elements to redraw)."""
    text = controls()
    if text is None:
        return
    result = run_classifier(str(default_dir(TASK)), device(), text)
    if "error" in result:
        st.warning(f"Nothing to classify: {result['error']}.")
        return
    if not input_notes(result, ck.model.config.max_len):
        return
    prediction(result)
    attention_views(result)


st.title("Sentiment classifier")
st.caption(
    "A small transformer trained on SST-2 movie-review sentences says whether a sentence is positive or "
    "negative. Inside, each head of each layer lets every word look at (attend to) the other words."
)
page_body(require_checkpoint(TASK))
