"""Translator (German -> English): the translation (greedy or beam), encoder self-, decoder self- and
cross-attention per layer and head, a decoding-step view and a teacher-forced view on a reference."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from model.core.checkpoint import Checkpoint
from model.core.results import RunResult
from model.core.tokenize import unwrap
from pages import heading
from pages.shared.attribute import checkpoint_contributions
from pages.shared.display import export_view_button, output_text
from pages.shared.heads import head_roles
from pages.shared.hub import TRANSLATOR_HUB, hub_cross_attention_panel
from pages.shared.models import model_card, require_checkpoint
from pages.shared.runs import attempt, input_notes, run_translation, teacher_forced
from pages.shared.state import bounded, init_state, on_request, one_of, sync_url, url_widget
from pages.shared.steps import followed_head, translation_steps
from pages.shared.text import clean_text, example_picker, text_box
from pages.shared.views import attention_downloads, attention_views, no_run

MODEL = "translator"  # its description: model.core.specs.SPECS
EXAMPLES = {  # simple Multi30k-style captions and a reference translation for each
    "ein mann fährt fahrrad .": "a man rides a bike .",
    "zwei hunde spielen im schnee .": "two dogs play in the snow .",
    "eine frau liest ein buch im park .": "a woman reads a book in the park .",
    "ein kleines mädchen lacht .": "a little girl laughs .",
    "drei männer stehen vor einem gebäude .": "three men stand in front of a building .",
    "ein junge springt ins wasser .": "a boy jumps into the water .",
}
DECODING = ("greedy", "beam")


@dataclass(frozen=True)
class Options:
    beam: int  # beam size; 1 decodes greedily
    reference: str | None  # the English fed to the decoder in the teacher-forced view; None: the view is off
    hub: str | None  # a Hugging Face translation model (id or folder) to compare with; None: no comparison


def reference_of(example: str) -> None:
    st.session_state["tr_reference"] = EXAMPLES[example]


def options() -> Options:
    """Outside the sentence's fragment, so a new sentence does not send them again (each reruns the page)."""
    # seeded while hidden too: picking an example fills it (reference_of), and the URL keeps it
    init_state("tr_reference", EXAMPLES.get(st.session_state.get("tr_text", next(iter(EXAMPLES))), ""))
    a, b, c = st.columns([3, 2, 2], vertical_alignment="bottom")
    example_picker("tr", list(EXAMPLES), parent=a, on_pick=reference_of)
    radio = dict(options=DECODING, horizontal=True, help="Beam search keeps several candidates.")
    decoding = url_widget(b.radio, "Decoding", "tr_decoding", "greedy", one_of(DECODING), **radio)
    greedy = decoding == "greedy"
    beam = url_widget(c.slider, "Beam size", "tr_beam", 4, bounded(2, 8), min_value=2, max_value=8, disabled=greedy)
    # the two toggles in a row of their own: in a fourth column the first one's label was cut at 1440 px
    left, right = st.columns(2)
    hint = "Feed a correct English sentence to the decoder and see what each of its words attends to."
    forced = url_widget(left.toggle, "Teacher-forced view on a reference translation", "tr_forced", False, help=hint)
    hint = "Loads a pretrained model (downloaded once); here the Hub may be unreachable."
    hub = url_widget(right.toggle, "Compare with a Hugging Face translation model", "tr_hub", False, help=hint)
    reference = url_widget(st.text_input, "Reference English translation", "tr_reference", "") if forced else None
    sync_url("tr_reference")  # in the URL while hidden as well
    label = "Hugging Face model id or local folder"
    hub_id = url_widget(st.text_input, label, "tr_hub_id", TRANSLATOR_HUB).strip() if hub else None
    return Options(1 if greedy else beam, reference, hub_id)


@st.fragment
def attention(ck: Checkpoint, result: RunResult) -> None:
    st.subheader("Attention")
    st.caption(
        "Cross-attention: each English word (row) looking at the German words (columns). Encoder: German looking "
        "at German. Decoder: English looking at the English written before it (later words are masked). Switch "
        "kind, view, layer (PageUp/PageDown) and head ([ and ]) in the explorer; click a weight to see how it was "
        "computed."
    )
    title = f"Translator: {' '.join(unwrap(result.kinds['encoder'].keys))} → {result.prediction}"
    cell = attention_views(result, "tr", ck=ck, first=("cross",), title=title)
    checkpoint_contributions(ck, result, "tr")
    # lazy: three charts that every new sentence would redraw, built only while the section is open
    steps = on_request("Decoding step by step: what each output word attended to", "tr_steps")
    if steps.open:
        with steps:
            figs = translation_steps(result, followed_head(result, "tr", cell, "cross")[0])
            notes = f"German: {' '.join(unwrap(result.kinds['encoder'].keys))}\nEnglish: {result.prediction}"
            export_view_button(figs, "Translator: decoding step by step", "tr-export", notes=notes)


@st.fragment
def body(ck: Checkpoint, opts: Options) -> None:
    """Everything that depends on the sentence, as one fragment: a new sentence reruns this, not the
    router and the sidebar."""
    hint = "Lower case, like the Multi30k captions."
    text = clean_text(text_box("tr", next(iter(EXAMPLES)), label="German sentence", help=hint), what="German sentence")
    result = text and attempt(run_translation, ck, text, opts.beam, None, what="Nothing to translate")
    if result is None or not input_notes(result, "the German sentence"):
        no_run("tr")
        return
    st.subheader("Translation")
    output_text(result.prediction or "(the model wrote no words)")
    if opts.reference is not None:
        result = teacher_forced(ck, text, opts.reference) or result
    attention(ck, result)
    if opts.hub is not None:  # the model's cross-attention beside ours, on the same German sentence
        hub_cross_attention_panel(opts.hub, text)
    head_roles(result, MODEL)  # which of the head finder's heads play their role on this sentence


def main() -> None:
    st.title(heading("translator"))
    st.caption(
        "An encoder-decoder transformer trained on Multi30k image captions. The encoder reads the German sentence; "
        "the decoder writes English one word at a time, attending to its own earlier words (causal self-attention) "
        "and to the German words (cross-attention)."
    )
    opts = options()
    ck = require_checkpoint(MODEL)
    body(ck, opts)
    attention_downloads("tr", MODEL)
    model_card(ck)  # under the explorer, closed: how the model was made comes after what it does


main()
