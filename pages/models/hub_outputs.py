"""A Hugging Face run on the Any model page: its prediction (next token, generated text, classes) and
what the query behind each generated token attended to."""

from __future__ import annotations

import streamlit as st

from model.hub.load import HubModel
from model.hub.run import HubRun
from pages.shared.display import output_text, show_figure
from pages.shared.state import range_slider
from pages.shared.text import markdown_escape, plural
from viz.attention import weights_frame
from viz.hub import probability_bars, step_figure


def prediction(hub: HubModel, out: HubRun) -> None:
    """What the model predicts: the next token's probabilities, the generated text, its classes or its
    output, and a note when it has no prediction head."""
    r = out.result
    if hub.shape == "decoder" and not out.steps and r.probs:  # no probabilities: no prediction head
        st.subheader("The next token")
        show_figure(probability_bars(r.probs, title="the likeliest next tokens", x_title="next token"), "hub-next")
    elif out.steps:
        st.subheader("Generated text" if hub.shape == "decoder" else "Output")
        output_text((r.notes.get("prompt", "") if hub.shape == "decoder" else "") + r.prediction)
        wrote = plural(len(out.steps), "token")
        st.caption(f"The model wrote {wrote} greedily, each the likeliest after the ones before.")
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
