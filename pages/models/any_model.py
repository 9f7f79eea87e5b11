"""Any model (Hugging Face): open a pretrained transformer from the Hub or a folder, run it on a text,
explore every layer and head of its attention, and click a weight to see how the model computed it."""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import streamlit as st

from model.analysis.maps import rollout_of
from model.hub.load import HubModel
from model.hub.tokens import hide_specials
from pages import heading
from pages.models.hub_limits import limits_note
from pages.models.hub_outputs import prediction, step_view
from pages.shared.attribute import hub_contributions
from pages.shared.explain import explain_panel, remembered_cell
from pages.shared.explorer import attention_explorer
from pages.shared.heads import head_roles
from pages.shared.hub import (
    MAX_GENERATE,
    attempt_run,
    describe,
    hub_download,
    hub_explainer,
    input_notes,
    open_hub,
    run_id,
)
from pages.shared.state import range_slider, url_widget
from pages.shared.text import markdown_escape

DEFAULT_TEXT = "Life is short, eat dessert first."
EXAMPLES = "`gpt2`, `distilbert-base-uncased`, `Helsinki-NLP/opus-mt-de-en`, or a folder such as `./my-model`"
CELL = "hub_cell"  # session key of the last clicked cell and the run it belongs to


@dataclass(frozen=True)
class Options:
    source: str  # a Hugging Face model id or a folder
    text: str  # as typed


def options() -> Options:
    left, right = st.columns([2, 3])
    hint = "A model id on huggingface.co, or a folder written by save_pretrained."
    box = dict(help=hint, placeholder="gpt2 or /path/to/folder")
    source = url_widget(left.text_input, "Model: a Hugging Face id or a folder", "hub_id", "", **box)
    text = url_widget(right.text_input, "Text", "hub_text", DEFAULT_TEXT, help="What the model reads.")
    return Options(source.strip(), text)


def generate_control(hub: HubModel) -> int:
    """How many tokens to generate: decoders and encoder-decoders with their prediction head only."""
    if hub.shape == "encoder" or not hub.spec.output:  # attention only: nothing to generate with
        return 0
    if hub.shape == "decoder":
        label, hint = "Generate N tokens", "0: only predict the next token. Greedy: always the likeliest token."
    else:
        label, hint = "Generate at most N tokens", "0: up to twice the input plus ten. Greedy decoding."
    return int(range_slider("hub_generate", 0, MAX_GENERATE, 0, label=label, help=hint))


@st.fragment
def attention(hub: HubModel, held: weakref.ref, text: str, generate: int) -> None:
    """The explorer and the explanation of a clicked weight: a click reruns this, not the model. The run
    comes held weakly, as the download holds it (Streamlit keeps a fragment's arguments until the next
    full run ends, and at 1,024 tokens a run's maps are 300 MB): :func:`~pages.shared.hub.run_hub` keeps it;
    where it has let it go for other runs, it is made again."""
    out = held() or attempt_run(hub, text, generate)
    if out is None:
        return
    st.subheader("Attention: every layer and head")
    hint = "Drop [CLS], </s> and the like; each row is renormalised over the keys that are left."
    result, kept = out.result, None
    if url_widget(st.toggle, "Hide special tokens", "hub_hide", False, help=hint):
        try:
            result, kept = hide_specials(out.result)
        except ValueError as err:
            st.warning(f"{markdown_escape(str(err))}. Showing every token.")
    kinds = list(result.kinds.values())
    rollout = rollout_of(result.kinds["encoder"]) if hub.shape == "encoder" else None
    title = f"{hub.source}: {text}"
    try:
        cell = attention_explorer(kinds, key="hub_explorer", url_prefix="hub", rollout=rollout, title=title)
    except ValueError as err:  # too many weights for the browser
        st.warning(markdown_escape(str(err)))
        return
    hub_download(hub, weakref.ref(out), text, generate, kept is not None, title, rollout)
    rid = run_id(hub.source, text, generate, kept is not None)
    cell = remembered_cell(rid, CELL, cell, kinds, rollout)
    hub_contributions(hub, out.result, rid, cell, "hub", kept)
    if cell is None:
        st.caption(
            "Click a cell of the map (or select one with the arrow keys and press Enter) to see how the "
            "model computed that weight."
        )
        return
    explain_panel(hub_explainer(hub, out.result, rid), out.result, cell, "hub", kept=kept)


def body(opts: Options) -> None:
    """The model opened, run on the text: its prediction, its generated tokens, its attention."""
    if not opts.source:
        st.info(f"Type a model id or a folder to open, e.g. {EXAMPLES}.")
        return
    hub = open_hub(opts.source)
    if hub is None:
        return
    st.caption(describe(hub))
    generate = generate_control(hub)
    text = opts.text.strip()
    out = attempt_run(hub, text, generate)  # an empty text, or one far past the model's length, says so
    if not out or not input_notes(hub, out.result):
        return
    prediction(hub, out)
    if out.steps:
        step_view(out)
    attention(hub, weakref.ref(out), text, generate)
    head_roles(out.result, hub.source)  # the head finder's roles here, once it has scored this model


def main() -> None:
    st.title(heading("any_model"))
    st.caption(
        "Open a pretrained transformer from the Hugging Face Hub or a folder: an encoder (BERT), a decoder (GPT-2) "
        "or an encoder-decoder (Marian, BART, T5). It reads your text; below are every layer and head of its "
        "attention, and a click on a weight shows how the model computed it."
    )
    limits_note()
    body(options())


main()
