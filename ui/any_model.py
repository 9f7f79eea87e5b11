"""Any model (Hugging Face): open a pretrained transformer from the Hub or a folder, run it on a text,
explore every layer and head of its attention, and click a weight to see how the model computed it."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from model.analysis.maps import rollout_of
from model.hub.load import HubModel
from model.hub.run import HubRun
from model.hub.tokens import hide_specials
from ui.shared.display import output_text, show_figure
from ui.shared.explain import explain_panel, remembered_cell
from ui.shared.explorer import attention_explorer, explorer_download
from ui.shared.hub import MAX_GENERATE, attempt_run, describe, hub_explainer, input_notes, limits_note, open_hub, run_id
from ui.shared.state import range_slider, url_widget
from ui.shared.text import clean_text, markdown_escape
from viz.attention import weights_frame
from viz.hub import probability_bars, step_figure

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


def prediction(hub: HubModel, out: HubRun) -> None:
    r = out.result
    if hub.shape == "decoder" and not out.steps and r.probs:  # no probabilities: no prediction head
        st.subheader("The next token")
        show_figure(probability_bars(r.probs, title="the likeliest next tokens", x_title="next token"), "hub-next")
    elif out.steps:
        st.subheader("Generated text" if hub.shape == "decoder" else "Output")
        output_text((r.notes.get("prompt", "") if hub.shape == "decoder" else "") + r.prediction)
        st.caption(f"The model wrote {len(out.steps)} tokens greedily, each the likeliest after the ones before.")
    elif r.probs:  # an encoder's classes, or its guesses for the first masked token
        st.subheader("Prediction")
        if r.prediction:
            output_text(r.prediction)
        classes = hub.spec.output == "classes"
        title = "the classes" if classes else "the likeliest tokens for the first mask"
        show_figure(probability_bars(r.probs, title=title, x_title="class" if classes else "token"), "hub-probs")
    elif r.prediction:
        st.subheader("Output")
        output_text(r.prediction)
    if "prediction" in r.notes:
        note = r.notes["prediction"]
        st.info(markdown_escape(note[:1].upper() + note[1:]) + ".")
    elif hub.spec.output == "":  # no prediction head
        st.info("This model has no prediction head: only its attention is shown.")


def step_view(out: HubRun) -> None:
    """What the query that produced generated token n attended to, in every layer (mean over heads)."""
    r, steps = out.result, out.steps
    st.subheader("What each generated token came from")
    number = range_slider("hub_step", 1, len(steps), 1, label="Generated token n")
    step = steps[number - 1]
    kind = r.kinds.get("cross") or r.kinds["decoder"]
    n = len(kind.keys) if kind.cross else step.position + 1  # a decoder query sees only the keys so far
    row = kind.weights[:, :, step.position, :n].mean(axis=1)  # (layers, keys)
    query = f"{step.position}:{kind.queries[step.position]}"
    source = "the source tokens (cross-attention)" if kind.cross else "the tokens so far"
    st.caption(
        f"Generated token {number} is **{markdown_escape(step.token)}** (probability {step.prob:.0%}). "
        f"It was predicted from query {markdown_escape(query)}, which attended to {source} as below."
    )
    fig = step_figure(row, kind.keys[:n], query_label=query, key_name=kind.key_axis)
    csv = weights_frame(row, [f"layer {i}" for i in range(len(row))], kind.keys[:n])
    show_figure(fig, "hub-step", csv=csv, csv_name="hub-step.csv")


@st.fragment
def attention(hub: HubModel, out: HubRun, text: str, generate: int) -> None:
    """The explorer and the explanation of a clicked weight: a click reruns this, not the model."""
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
    explorer_download(kinds, title, key="hub-download", rollout=rollout)
    rid = run_id(hub.source, text, generate, kept is not None)
    cell = remembered_cell(rid, CELL, cell, kinds, rollout)
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
    text = clean_text(opts.text, what="text")
    out = text and attempt_run(hub, text, generate)
    if not out or not input_notes(hub, out.result):
        return
    prediction(hub, out)
    if out.steps:
        step_view(out)
    attention(hub, out, text, generate)


def main() -> None:
    st.title("Any model (Hugging Face)")
    st.caption(
        "Open a pretrained transformer from the Hugging Face Hub or a folder: an encoder (BERT), a decoder (GPT-2) "
        "or an encoder-decoder (Marian, BART, T5). It reads your text; below are every layer and head of its "
        "attention, and a click on a weight shows how the model computed it."
    )
    limits_note()
    body(options())


main()
