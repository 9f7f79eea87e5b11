"""Head finder: every head of a model scored over a corpus (previous token, first-token sink, self, entropy,
distance, induction, duplicate, alignment; each also without the sink), a scatter, the top heads by any score,
each head's lines by decile opening the explorer, and heads ranked by a pattern the student draws."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from model.analysis.heads import BASE_METRICS, METRIC_HELP
from model.core.specs import SPECS, kind_label
from pages import heading
from pages.shared.display import CHART_TIPS
from pages.shared.heads import corpus_title, draw_pattern, examples_markdown, explorer_link, load_scores, top_markdown
from pages.shared.state import bounded, one_of, select_choice, url_widget
from pages.shared.text import markdown_escape
from viz.heads import decile_table, head_id, head_name, head_scatter, top_heads

SOURCES = (*SPECS, "hub")


@dataclass(frozen=True)
class Options:
    source: str  # one of our models, or a Hub id or folder ("" when none is typed yet)
    x: str  # the scatter's metrics
    y: str
    metric: str  # what the finder ranks by
    top: int


def options() -> Options:
    left, right = st.columns([1, 2])
    named = lambda s: SPECS[s].title if s in SPECS else "A Hugging Face model"
    which = url_widget(
        left.selectbox, "Model", "heads_model", SOURCES[0], one_of(SOURCES), options=SOURCES, format_func=named
    )
    source = (
        url_widget(right.text_input, "Hugging Face id or folder", "heads_hub_id", "gpt2").strip()
        if which == "hub"
        else which
    )
    hint = "Drop the first position and renormalise each row: a head that only parks on the first token scores low."
    sink = url_widget(st.toggle, "Rank without the first-token sink", "heads_nosink", False, help=hint)
    names = [m + "_nosink" if sink else m for m in BASE_METRICS]
    a, b, c, d = st.columns(4)
    x = select_choice("heads_x", names, names[0], label="Scatter: x", parent=a)
    y = select_choice("heads_y", names, names[1], label="Scatter: y", parent=b)
    metric = select_choice("heads_metric", names, names[0], label="Rank by", parent=c, help=METRIC_HELP.get(names[0]))
    top = url_widget(d.number_input, "Top N", "heads_top", 5, bounded(1, 50), min_value=1, max_value=50)
    return Options(source, x, y, metric, int(top))


def chosen_head(rows: list[dict], opts: Options, event) -> int:
    """The index in ``rows`` of the head a click on the scatter picked, else the one in the select box (the
    finder's first by default; a model switch goes back to the new model's first)."""
    if st.session_state.get("_heads_source") != opts.source:  # another model: its own top head, not the old pick
        for key in ("heads_head", "heads_clicked"):
            st.session_state.pop(key, None)
        st.session_state["_heads_source"] = opts.source
    points = event["selection"]["points"] if event else []
    clicked = points[0].get("customdata") if points else None
    if clicked and clicked != st.session_state.get("heads_clicked"):
        st.session_state["heads_clicked"] = st.session_state["heads_head"] = clicked
    ids = [head_id(r) for r in rows]
    ranked = top_heads(rows, opts.metric, 1)
    first = head_id(ranked.iloc[0]) if len(ranked) else ids[0]
    picked = select_choice("heads_head", ids, first, label="Head", format_func=lambda i: head_name(rows[ids.index(i)]))
    return ids.index(picked)


def body(opts: Options) -> None:
    got = load_scores(opts.source)
    if got is None:
        return
    report, blocks = got
    stored, lines = report["heads"], report["lines"]
    # rows as shown: each kind by its display word (the generator's causal "encoder" reads "decoder")
    rows = [{**r, "kind": kind_label(opts.source, r["kind"])} for r in stored]
    st.caption(
        f"{report['sequences']} lines of {markdown_escape(corpus_title(report.get('corpus', '')))}, "
        f"each cut to {report['max_tokens']} tokens."
    )
    for note in report.get("notes", []):
        st.warning(markdown_escape(note))
    event = st.plotly_chart(
        head_scatter(rows, opts.x, opts.y, selected=st.session_state.get("heads_head")),
        config={"displayModeBar": False},
        key="heads_scatter",
        on_select="rerun",
        selection_mode="points",
    )
    st.html(CHART_TIPS, unsafe_allow_javascript=True)  # its hover labels go after a click, as every chart's do
    # one Markdown element, no data grid or styled table: each element a reload draws costs (bench.paired)
    st.markdown(f"#### Top {opts.top} by {opts.metric}\n\n" + top_markdown(top_heads(rows, opts.metric, opts.top)))
    picked = chosen_head(rows, opts, event)
    row, kind = rows[picked], stored[picked]["kind"]  # the link names the kind as the model page stores it
    links = [explorer_link(opts.source, line, kind, row["layer"], row["head"]) for line in lines]
    table = decile_table(row, opts.metric, lines, links)
    if table.empty:
        why = "is measured on repeated random tokens, not on these lines" if row.get(opts.metric) is not None else ""
        st.info(f"{opts.metric} {why or 'does not apply to this head'}.")
    else:  # the caption and the table as one element (each element a reload draws costs)
        about = f"{head_name(row)}: its top line, then a line from each decile of its {opts.metric} over the corpus."
        st.markdown(f"*{markdown_escape(about)}*\n\n" + examples_markdown(table))
    draw_pattern(blocks)


def main() -> None:
    st.title(heading("heads"))
    st.caption(
        "Which head does what? Every head scored over a corpus, pooled over every query row of every line: previous token, first token (the sink), self, entropy, distance, and on repeated random tokens induction and duplicate. Click a head in the scatter to see its lines by decile and open one in the explorer."
    )
    body(options())


main()
