"""Any model (Hugging Face): open a pretrained transformer from the Hub or a folder, run it on a text,
explore every layer and head of its attention, and click a weight to see how the model computed it."""

from __future__ import annotations

import streamlit as st

from model.analysis.maps import rollout_of
from model.hub.load import HubModel
from model.hub.run import HubRun
from model.hub.tokens import hide_specials
from ui.shared.display import output_text, show_figure
from ui.shared.explain import explain_panel, remembered_cell
from ui.shared.explorer import attention_explorer, explorer_download
from ui.shared.hub import MAX_GENERATE, attempt_run, describe, hub_explainer, input_notes, limits_note, open_hub, run_id
from ui.shared.state import bounded, init_state, keep_valid, sync_url
from ui.shared.text import clean_text, markdown_escape
from viz.attention import weights_frame
from viz.hub import probability_bars, step_figure

DEFAULT_TEXT = "Life is short, eat dessert first."
EXAMPLES = "`gpt2`, `distilbert-base-uncased`, `Helsinki-NLP/opus-mt-de-en`, or a folder such as `./my-model`"
CELL = "hub_cell"  # session key of the last clicked cell and the run it belongs to


def controls() -> None:
    init_state("hub_id", "")
    init_state("hub_text", DEFAULT_TEXT)
    left, right = st.columns([2, 3])
    left.text_input("Model: a Hugging Face id or a folder", key="hub_id", placeholder="gpt2 or /path/to/folder",
                    help="A model id on huggingface.co, or a folder written by save_pretrained.")  # fmt: skip
    right.text_input("Text", key="hub_text", help="What the model reads.")
    sync_url("hub_id", "hub_text")


def generate_control(hub: HubModel) -> int:
    """How many tokens to generate: decoders and encoder-decoders only."""
    if hub.shape == "encoder":
        return 0
    init_state("hub_generate", 0, bounded(0, MAX_GENERATE))
    if hub.shape == "decoder":
        label, help = "Generate N tokens", "0: only predict the next token. Greedy: always the likeliest token."
    else:
        label, help = "Generate at most N tokens", "0: up to twice the input plus ten. Greedy decoding."
    st.slider(label, 0, MAX_GENERATE, key="hub_generate", help=help)
    sync_url("hub_generate")
    return int(st.session_state["hub_generate"])


def prediction(hub: HubModel, out: HubRun) -> None:
    r = out.result
    if hub.shape == "decoder" and not out.steps:
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
        title = "the classes" if hub.head == "classifier" else "the likeliest tokens for the first mask"
        show_figure(probability_bars(r.probs, title=title, x_title="class" if hub.head == "classifier" else "token"),
                    "hub-probs")  # fmt: skip
    elif r.prediction:
        st.subheader("Output")
        output_text(r.prediction)
    if "prediction" in r.notes:
        note = r.notes["prediction"]
        st.info(markdown_escape(note[:1].upper() + note[1:]) + ".")
    elif hub.head == "base":
        st.info("This model has no prediction head: only its attention is shown.")


def step_view(out: HubRun) -> None:
    """What the query that produced generated token n attended to, in every layer (mean over heads)."""
    r, steps = out.result, out.steps
    st.subheader("What each generated token came from")
    init_state("hub_step", 1, bounded(1, len(steps)))
    keep_valid("hub_step", range(1, len(steps) + 1), 1)
    if len(steps) > 1:
        st.slider("Generated token n", 1, len(steps), key="hub_step")
    number = st.session_state["hub_step"] if len(steps) > 1 else 1
    step = steps[number - 1]
    kind = r.kinds.get("cross") or r.kinds["decoder"]
    n = len(kind.keys) if kind.cross else step.position + 1  # a decoder query sees only the keys so far
    row = kind.weights[:, :, step.position, :n].mean(axis=1)  # (layers, keys)
    query = f"{step.position}:{kind.queries[step.position]}"
    source = "the source tokens (cross-attention)" if kind.cross else "the tokens so far"
    st.caption(f"Generated token {number} is **{markdown_escape(step.token)}** (probability {step.prob:.0%}). "
               f"It was predicted from query {markdown_escape(query)}, which attended to {source} as below.")  # fmt: skip
    fig = step_figure(row, kind.keys[:n], query_label=query, key_name=kind.key_axis)
    show_figure(fig, "hub-step", csv=weights_frame(row, [f"layer {i}" for i in range(len(row))], kind.keys[:n]),
                csv_name="hub-step.csv")  # fmt: skip
    sync_url("hub_step")


@st.fragment
def attention(hub: HubModel, out: HubRun, text: str, generate: int) -> None:
    """The explorer and the explanation of a clicked weight: a click reruns this, not the model."""
    st.subheader("Attention: every layer and head")
    init_state("hub_hide", False, lambda raw: raw == "True")
    st.toggle("Hide special tokens", key="hub_hide",
              help="Drop [CLS], </s> and the like; each row is renormalised over the keys that are left.")  # fmt: skip
    sync_url("hub_hide")
    result, kept = out.result, None
    if st.session_state["hub_hide"]:
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
        st.caption("Click a cell of the map (or select one with the arrow keys and press Enter) to see how the "
                   "model computed that weight.")  # fmt: skip
        return
    explain_panel(hub_explainer(hub, out.result, rid), out.result, cell, "hub", kept=kept)


st.title("Any model (Hugging Face)")
st.caption(
    "Open a pretrained transformer from the Hugging Face Hub or a folder: an encoder (BERT), a decoder (GPT-2) "
    "or an encoder-decoder (Marian, BART, T5). It reads your text; below are every layer and head of its "
    "attention, and a click on a weight shows how the model computed it."
)
limits_note()
controls()
source = st.session_state["hub_id"].strip()
if not source:
    st.info(f"Type a model id or a folder to open, e.g. {EXAMPLES}.")
    st.stop()
hub = open_hub(source)
if hub is None:
    st.stop()
st.caption(describe(hub))
generate = generate_control(hub)
text = clean_text(st.session_state["hub_text"], what="text")
out = text and attempt_run(hub, text, generate)
if not out or not input_notes(hub, out.result):
    st.stop()
prediction(hub, out)
if out.steps:
    step_view(out)
attention(hub, out, text, generate)
