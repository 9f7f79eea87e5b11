"""The contributions panel: beside the explorer, for the selected query token, what each key gave it by
attention, the norm of its weighted value, value zeroing, rollout and gradient × attention
(:mod:`model.analysis.attribute`), side by side over the same keys, with how far each agrees with attention.

One panel for every model family: a family differs only in its :data:`Attributor` (kind, query) ->
:class:`~model.analysis.attribute.Attribution`, cached per run. The query is the row of the cell last
clicked in the explorer (:func:`pages.shared.explain.remembered_cell`), or a number typed here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from model.analysis.attribute import Attribution, attribute
from model.core.checkpoint import Checkpoint
from model.core.results import AttentionKind, RunResult
from model.hub.attribute import attribute as hub_attribute
from model.hub.load import HubModel
from pages.shared.display import show_figure
from pages.shared.explain import remembered_cell, result_id
from pages.shared.hub import CACHE as HUB_CACHE
from pages.shared.runs import CACHE
from pages.shared.state import on_request
from pages.shared.text import markdown_escape
from viz.attribute import agreement_frame, contributions_figure, layer_sentence, source_share_figure

Attributor = Callable[[str, int], Attribution]  # (kind, query) -> every method for that row
TITLE = "Did attention matter? What each key contributed to the selected query"


@st.cache_data(max_entries=32, show_spinner="Measuring contributions…", **CACHE)
def attribute_row(
    ck: Checkpoint, inputs: dict, kind: str, query: int, named: bool, _view: AttentionKind | None
) -> Attribution:
    """:func:`model.analysis.attribute.attribute`, cached per run's ids; ``_view`` (given: ``named``) only
    names the tokens as the run shows them."""
    return attribute(ck, inputs, kind, query, view=_view if named else None)


@st.cache_data(max_entries=16, show_spinner="Measuring contributions…", **HUB_CACHE)
def hub_attribute_row(hub: HubModel, _result: RunResult, rid: tuple, kind: str, query: int) -> Attribution:
    """:func:`model.hub.attribute.attribute` of the run ``rid`` names (``_result``)."""
    return hub_attribute(hub, _result, kind, query)


def _full(ck: Checkpoint, result: RunResult) -> bool:
    """Every position of the run is shown (no special token hidden): the explorer's rows are the model's."""
    return all(len(k.queries) == len(result.inputs[ck.spec.kind(n).query_input]) for n, k in result.kinds.items())


def checkpoint_contributions(ck: Checkpoint, result: RunResult, prefix: str) -> None:
    """The panel for one of our models under the explorer ``prefix`` names (its clicked cell, if any)."""
    full = _full(ck, result)
    cell = remembered_cell(result_id(result), f"{prefix}_cell", None) if full else None
    views = {n: (k if full else None) for n, k in result.kinds.items()}
    sizes = {n: len(result.inputs[ck.spec.kind(n).query_input]) for n in result.kinds}
    contributions_panel(
        lambda kind, q: attribute_row(ck, result.inputs, kind, q, full, views[kind]), sizes, cell, prefix
    )


def hub_contributions(
    hub: HubModel, result: RunResult, rid: tuple, cell: dict | None, prefix: str, kept: dict | None = None
) -> None:
    """The panel for a Hugging Face model's run ``rid``; ``kept`` maps shown rows back to positions where
    special tokens are hidden."""
    if cell is not None and kept:
        cell = {**cell, "query": kept[cell["kind"]][0][cell["query"]]}
    sizes = {n: len(k.queries) for n, k in result.kinds.items()}
    contributions_panel(lambda kind, q: hub_attribute_row(hub, result, rid, kind, q), sizes, cell, prefix)


def _selected(sizes: dict[str, int], cell: dict[str, Any] | None, prefix: str) -> tuple[str, int]:
    """The kind and query row: the clicked cell's, else chosen here."""
    if cell is not None:
        st.caption(f"The query is the row of the cell you clicked: {cell['kind']} attention, position {cell['query']}.")
        return cell["kind"], int(cell["query"])
    left, right = st.columns(2)
    kind = left.selectbox("Attention", list(sizes), key=f"{prefix}_contrib_kind")
    query = right.number_input(
        "Query position",
        0,
        sizes[kind] - 1,
        sizes[kind] - 1,
        key=f"{prefix}_contrib_query",
        help="Or click a cell of the explorer: its row is the query. The last position is the one that predicts.",
    )
    return kind, int(query)


def contributions_panel(attributor: Attributor, sizes: dict[str, int], cell: dict | None, prefix: str) -> None:
    """A closed section (built only while open): the methods side by side for the selected query."""
    section = on_request(TITLE, f"{prefix}_contrib")
    if not section.open:
        return
    with section:
        kind, query = _selected(sizes, cell, prefix)
        try:
            a = attributor(kind, query)
        except ValueError as err:
            st.warning(markdown_escape(str(err)))
            return
        for note in a.notes:
            st.info(markdown_escape(note))
        layer = a.layers - 1
        if a.layers > 1:
            layer = st.slider("Layer", 0, a.layers - 1, a.layers - 1, key=f"{prefix}_contrib_layer")
        shares = a.shares_at(layer)
        fig = contributions_figure(shares, a.key_tokens, query=a.query_token, layer=layer, visible=a.visible)
        show_figure(fig, f"{prefix}-contrib")
        heads = a.methods["attention"].shape[1]
        # the chart's own layer, from the chart's own rows; holds the user's tokens: plain text, never markup
        st.text(layer_sentence(shares, a.key_tokens, a.visible, layer, heads))
        st.dataframe(agreement_frame(a.agreement, a.absent), hide_index=True, key=f"{prefix}_contrib_table")
        if a.source_share is not None:
            show_figure(source_share_figure(a.source_share, a.query_tokens), f"{prefix}-source-share")
            st.caption(
                "Source versus the words already written: for each English word and decoder layer, the share of "
                "what its cross-attention step added that came from the German words (measured as in Ferrando "
                "et al. 2022), layer by layer, not followed through the layers."
            )
        st.caption(
            "Agreement is Spearman's rank correlation with the head-averaged attention of the same layer, over "
            f"the keys the query sees, averaged over layers. Gradient × attention differentiates {a.score or 'no score'}."
        )
