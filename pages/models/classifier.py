"""Sentiment classifier: the prediction and the attention of every layer and head, with rollout."""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from model.analysis.maps import rollout_of, without_special
from model.core.checkpoint import Checkpoint
from model.core.results import RunResult
from pages import heading
from pages.shared.attribute import checkpoint_contributions
from pages.shared.display import show_figure
from pages.shared.heads import head_roles
from pages.shared.models import model_card, require_checkpoint
from pages.shared.outputs import label_metric
from pages.shared.runs import attempt, input_notes, run_model
from pages.shared.state import on_request, url_widget
from pages.shared.text import clean_text, example_picker, text_box
from pages.shared.views import attention_downloads, attention_views, axes, no_run
from viz.attention import query_bar

MODEL = "classifier"  # its description: model.core.specs.SPECS
DEFAULT_TEXT = "the acting is wonderful but the plot is thin"
EXAMPLES = (
    DEFAULT_TEXT,
    "a moving and beautifully made film",
    "the story is boring and far too long",
    "not bad at all",
    "i loved every minute of it",
    "it is not a good movie",
)


@dataclass(frozen=True)
class Options:
    hide: bool  # hide special tokens and renormalise each row over the words that remain


def options() -> Options:
    """Outside the sentence's fragment, so a new sentence does not send them again (each reruns the page)."""
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    example_picker("cls", EXAMPLES, parent=left)
    hint = "Removes <unk> and <pad> rows and columns, then rescales each row to sum to 1 again."
    return Options(hide=url_widget(right.toggle, "Hide special tokens and renormalise", "cls_hide", False, help=hint))


@st.fragment
def attention(ck: Checkpoint, result: RunResult, hide: bool) -> None:
    kind = result.kinds["encoder"]
    if hide:
        if any(kind.special):
            st.caption("Unknown words (`<unk>`) are hidden; each row is rescaled over the words that remain.")
            result = replace(result, kinds={"encoder": without_special(kind)})
            kind = result.kinds["encoder"]
        else:
            st.caption("This sentence has no special tokens to hide.")
    rolled = rollout_of(kind)
    title = f"Sentiment classifier: {' '.join(kind.keys)} → {result.prediction}"
    attention_views(result, "cls", ck=None if hide else ck, rollout=rolled, title=title)
    checkpoint_contributions(ck, result, "cls")
    tokens = axes(kind, result)[0]
    reach = on_request("How much each word reaches the sentence vector (rollout)", "cls_reach")
    if reach.open:  # lazy: a chart a new sentence would otherwise redraw every time
        with reach:
            query = "the sentence (mean of all positions)"
            title = "how much each word reaches the pooled sentence vector that the classifier reads"
            bar = query_bar(rolled.mean(axis=0), tokens, query_label=query, title=title)
            show_figure(bar, "cls-rollout-bar")


@st.fragment
def body(ck: Checkpoint, opts: Options) -> None:
    """Everything that depends on the sentence, as one fragment: a new sentence reruns this, not the
    router and the sidebar."""
    text = text_box("cls", DEFAULT_TEXT, label="Sentence (English)", help="A short movie-review sentence.")
    text = clean_text(text, what="sentence")
    result = text and attempt(run_model, ck, text, what="Nothing to classify")
    if result is None or not input_notes(result, "the sentence"):
        no_run("cls")
        return
    label_metric(st, "Prediction", result)
    attention(ck, result, opts.hide)
    head_roles(result, MODEL)  # which of the head finder's heads play their role on this sentence


def main() -> None:
    st.title(heading("classifier"))
    st.caption(
        "A small transformer trained on SST-2 movie-review sentences says whether a sentence is positive or "
        "negative. Inside, each head of each layer lets every word look at (attend to) the other words. Every layer "
        "and head is in the explorer below: pick a view, a layer (PageUp/PageDown) and a head ([ and ]); hover a word "
        "to see what it looks at (row = the query word, column = the key word it attends to); click a weight to see "
        "how the model computed it. Rollout (Abnar & Zuidema, 2020) follows attention through all layers: average "
        "the heads, add the residual connection, rescale rows, multiply layer by layer."
    )
    opts = options()
    ck = require_checkpoint(MODEL)
    body(ck, opts)
    attention_downloads("cls", MODEL)
    model_card(ck)  # under the explorer, closed: how the model was made comes after what it does


main()
