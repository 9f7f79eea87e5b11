"""Start here: what the app teaches, the path through its pages, and what the three models reached
(read from each checkpoint's config.json, never written into the page)."""

from __future__ import annotations

import os

import streamlit as st

from model.core.checkpoint import CheckpointError, default_dir, read_meta
from model.lessons.hand import walkthrough
from pages import SECTIONS, heading, in_section
from pages.home.cards import link_cards
from pages.shared.display import show_figure
from viz.attention import attention_heatmap
from viz.history import metric_name

# the start page's path through the app: each section's pages, from the registry (pages/__init__.py)
PATH = {heading: in_section(section) for section, heading in SECTIONS.items() if heading}
MODELS = {  # each model with the data it learned from
    "classifier": "Sentiment classifier (SST-2)",
    "generator": "Shakespeare generator",
    "translator": "Translator (Multi30k)",
}
SPLITS = ("val_", "dev_", "test_")  # results on held-out data; the rest (loss on training, steps) is bookkeeping


@st.cache_data(show_spinner=False, max_entries=8)
def headline(directory: str, _stamp: float) -> dict[str, float] | None:
    """The held-out results recorded in a checkpoint's config.json, or None without a checkpoint."""
    try:
        results = read_meta(directory).get("results") or {}
    except CheckpointError:
        return None
    return {k: float(v) for k, v in results.items() if k.startswith(SPLITS) and isinstance(v, int | float)}


def figure_text(name: str, value: float) -> str:
    return f"{value:.1%}" if "accuracy" in name else f"{value:.2f}" if "bleu" in name else f"{value:.3f}"


def results() -> None:
    st.subheader("What the three models reached")
    for column, (task, name) in zip(st.columns(3), MODELS.items()):
        directory = default_dir(task)
        config = directory / "config.json"
        found = headline(str(directory), os.path.getmtime(config) if config.is_file() else 0.0)
        with column:
            if found is None:
                st.metric(name, "not trained yet", help=f"Train it with `python -m model train {task}`.")
            elif not found:
                st.metric(name, "no results recorded", help="Its config.json has no held-out results.")
            else:
                (first, value), *rest = found.items()
                others = ", ".join(f"{metric_name(k)} {figure_text(k, v)}" for k, v in rest)
                st.metric(name, figure_text(first, value), help=others or None)
                st.caption(metric_name(first) + (f" · {others}" if others else ""))


@st.cache_resource(show_spinner=False)
def picture():
    """The first page's attention weights, small: what every heatmap in the app looks like."""
    w = walkthrough()
    # level column labels ran into each other on a narrow screen ("1:is2:shor3:eat"): stand them upright
    fig = attention_heatmap(w.weights, w.tokens, title="one head's weights on the first page", tickangle=-90)
    fig.update_layout(height=360)
    return fig


def main() -> None:
    st.title(heading("start"))
    # text above the picture, not beside it: in a column of a 1024-px screen the picture squeezed its
    # numbers together and dropped every other label
    st.markdown(
        "Attention is how a transformer decides which other words matter for each word. This app shows it "
        "with real numbers: first by hand on one sentence, then inside three small models trained from scratch. "
        "Follow the path in order, or jump in anywhere.\n\n"
        "Each row of a heatmap is one word asking (the query); each column a word it may read (the key); "
        "the colour is how much it reads it. Every row sums to 1."
    )
    show_figure(picture(), "start-picture")
    link_cards(PATH)
    results()


main()
