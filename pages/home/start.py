"""Start here: what the app teaches, the lesson and the path through its pages, the teacher's guide (the lesson as a
class, :mod:`pages.shared.guide`) and what the three models reached (read from each checkpoint's config.json,
never written into the page)."""

from __future__ import annotations

import os

import streamlit as st

from model.core.checkpoint import CheckpointError, default_dir, read_meta
from model.core.specs import SPECS
from model.lessons.hand import walkthrough
from pages import SECTIONS, heading, in_section
from pages import page as page_entry
from pages.home.cards import link_cards
from pages.shared.display import show_figure
from pages.shared.glossary import glossary
from pages.shared.guide import lesson_link, teachers_guide
from viz.attention import attention_heatmap
from viz.history import metric_name

# the start page's path through the app: each section's pages, from the registry (pages/__init__.py)
PATH = {heading: in_section(section) for section, heading in SECTIONS.items() if heading}
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
    # the data after a dot, not in brackets: the translator's title has its own ("Translator (de → en) · Multi30k")
    for column, (task, name) in zip(st.columns(len(SPECS)), ((t, f"{s.title} · {s.data}") for t, s in SPECS.items())):
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


PICTURE_SENTENCE = "Attention lets words read each other."  # not the lessons' sentence: its weights answer
# the workshop's and the classroom's first question ("which key wins for 'is'?")


@st.cache_resource(show_spinner=False)
def picture():
    """One hand-worked head's weights, small: what every heatmap in the app looks like."""
    w = walkthrough(PICTURE_SENTENCE)
    # level column labels ran into each other on a narrow screen ("1:is2:shor3:eat"): stand them upright
    fig = attention_heatmap(w.weights, w.tokens, title="one head's weights on another sentence", tickangle=-90)
    # the colour scale under the map, not beside it: at 390 px a bar on the right left each cell 23 px for its
    # 20-px number, so a row read "0.340.000.00"; the width it frees goes to the cells
    bar = dict(orientation="h", x=0.5, xanchor="center", y=-0.04, yanchor="top", thickness=10, len=0.8)
    fig.update_traces(colorbar=bar | dict(title=dict(text="weight", side="right"), tickvals=[0, 0.5, 1]))
    fig.update_layout(height=400, margin=dict(b=56))
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
    with st.container(border=True):
        lesson_link(1, "New here? Follow the lesson, one step at a time")
        st.caption(page_entry("lesson").purpose)
    show_figure(picture(), "start-picture")
    glossary(key="start-glossary")
    link_cards(PATH)
    teachers_guide()  # the lesson as a class, from the same steps as the lesson page
    results()


main()
