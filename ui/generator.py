"""Shakespeare generator: the next-character distribution under the sampling controls, the generated text,
the causal mask step by step, what the model looked at for each new character, every layer and head."""

from __future__ import annotations

import streamlit as st

from model.core.inference import reshaped
from model.core.results import RunResult
from model.analysis.runs import chars_read
from model.core.checkpoint import Checkpoint
from ui.shared.display import export_view_button, output_text, show_figure
from ui.shared.models import require_checkpoint
from ui.shared.runs import (
    attempt,
    input_notes,
    read_input,
    run_causal_steps,
    run_generation,
    run_last_query,
    run_model,
)
from ui.shared.state import bounded, init_state, on_request, one_of, range_slider, sync_url
from ui.shared.text import markdown_escape
from ui.shared.views import attention_downloads, attention_views
from viz.attention import causal_step_figures, visible_chars, weights_frame
from viz.compare import distribution_bars, visible_probs
from viz.steps import step_figures

TASK = "generator"
DEFAULT_PROMPT = "ROMEO:"
MIN_LENGTH, MAX_LENGTH = 20, 400
MAX_WINDOW = 40  # characters per causal-step axis: readable on a projector
STEP_TITLES = {"scores": "1. scores", "mask": "2. mask", "masked": "3. masked scores", "softmax": "4. softmax"}
SAMPLING = ("gen_temp", "gen_topk")


def controls(vocab_size: int) -> None:
    init_state("gen_prompt", DEFAULT_PROMPT)
    init_state("gen_temp", 0.8, bounded(0.0, 2.0, float))
    init_state("gen_topk", 0, bounded(0, vocab_size))
    init_state("gen_length", 200, bounded(MIN_LENGTH, MAX_LENGTH))
    init_state("gen_seed", 0, bounded(0, 2**31 - 1))
    if "gen_used" not in st.session_state:  # the sampling settings the shown text was written with
        st.session_state["gen_used"] = tuple(st.session_state[k] for k in SAMPLING)
    left, right = st.columns([2, 3])
    left.text_area("Prompt", key="gen_prompt", height=110, help="The model continues this text.")
    a, b = right.columns(2)
    a.slider("Length (characters)", MIN_LENGTH, MAX_LENGTH, step=10, key="gen_length")
    b.number_input("Seed", 0, 2**31 - 1, step=1, key="gen_seed", help="The same seed gives the same text.")
    sync_url("gen_prompt", "gen_length", "gen_seed")


def write_again() -> None:
    st.session_state["gen_used"] = tuple(st.session_state[k] for k in SAMPLING)


@st.fragment
def sampling(ck: Checkpoint, prompt: str) -> None:
    """Temperature and top-k reshape the next-character distribution here and now; the text below is
    written again only when asked (a new text costs a whole generation)."""
    vocab_size = len(ck.vocabs["chars"])
    a, b = st.columns(2)
    a.slider("Temperature", 0.0, 2.0, step=0.1, key="gen_temp", help="0 always takes the likeliest character.")
    b.slider("Top-k", 0, vocab_size, key="gen_topk", help="Sample only among the k likeliest characters; 0 = all.")
    temp, top_k = (st.session_state[k] for k in SAMPLING)
    sync_url(*SAMPLING)
    nxt = attempt(run_model, ck, prompt)
    if nxt is None:
        return
    plain = visible_probs(nxt.probs)
    shaped = reshaped(plain, temp, top_k or None)
    fig = distribution_bars(plain, shaped, names=("temperature 1, every character", f"temperature {temp:g}, top-k {top_k or 'all'}"),
                            title="what comes after the prompt: the 10 likeliest characters", x_title="next character")  # fmt: skip
    show_figure(fig, "gen-next")
    used = st.session_state["gen_used"]
    if used != (temp, top_k):
        st.button("Write the text again with these settings", key="gen_write", on_click=write_again, type="primary")
        st.caption(f"The text below was written with temperature {used[0]:g}, top-k {used[1] or 'all'}.")


def causal_section(ck: Checkpoint, text: str, layer: int, head: int) -> list:
    st.subheader("The causal mask, step by step")
    st.caption(
        f"Layer {layer}, head {head}, reading only the last {len(text)} characters, so each row of the softmax "
        "sums to 1. A character may look at itself and at earlier characters, never at later ones: those "
        "would give away what comes next."
    )
    names = list(STEP_TITLES.values())
    init_state("gen_causal_tab", names[0], one_of(names))
    tabs = dict(zip(STEP_TITLES, st.tabs(names, key="gen_causal_tab", on_change="rerun")))
    sync_url("gen_causal_tab")
    steps = run_causal_steps(ck, text, layer, head)
    labels = visible_chars(chars_read(ck, text))
    shown = [name for name, tab in tabs.items() if tab.open]
    figs = causal_step_figures(steps["scores"], steps["mask"], steps["masked"], steps["softmax"], labels, only=shown)
    for name, fig in figs.items():
        with tabs[name]:
            csv = weights_frame(steps["softmax"], labels) if name == "softmax" else None
            show_figure(fig, f"gen-causal-{name}", csv=csv, csv_name=f"generator-layer{layer}-head{head}-softmax.csv")
    return list(figs.values())


def step_section(ck: Checkpoint, result: RunResult, layer: int, window: int) -> list:
    """The chosen generated character: its per-head and mean attention; returns the two figures."""
    st.subheader("What the model looked at to write each new character")
    prompt, new_text = result.notes["prompt"], result.notes["new_text"]
    n = range_slider("gen_step", 1, len(new_text), 1, label="Generated character n")
    full = prompt + new_text
    p = len(prompt) + n - 1  # position of character n in the full text
    context = full[:p][-ck.model.config.block_size :]
    row = run_last_query(ck, context)[layer]  # (heads, keys)
    k = min(window, row.shape[1])
    keys = visible_chars(chars_read(ck, context[-k:]))
    query = f"{k}:{keys[-1]}"
    hidden = 1.0 - row[:, -k:].mean(axis=0).sum()
    st.caption(
        f"Character {n} is **{markdown_escape(visible_chars([full[p]])[0])}**. To write it, the model's query was "
        f"the character just before it ({markdown_escape(query)}), which attends over the context. Layer {layer}; "
        f"the last {k} of {len(context)} context characters are drawn"
        + (f" ({hidden:.0%} of the mean weight falls on earlier ones)." if hidden > 0.005 else ".")
    )
    bar_title = f"mean over heads: what {query} attended to"
    heads, bar = step_figures(row[:, -k:], keys, query_label=query, bar_title=bar_title)
    show_figure(heads, "gen-step-heads")
    show_figure(bar, "gen-step-bar")
    return [heads, bar]


@st.fragment
def attention(ck: Checkpoint, result: RunResult) -> None:
    st.subheader("Every layer and head")
    T = len(result.kinds["encoder"].keys)
    st.caption(
        f"The final context window of {T} characters, as the model read it. The masked cells (hatched) are the "
        "future: a character never sees what comes after it. Click a weight to see how it was computed; the steps "
        "below follow the head you clicked."
    )
    title = "Shakespeare generator: " + result.notes["prompt"][:40]
    cell = attention_views(result, "gen", ck=ck, title=title)
    layer, head = (cell["layer"], cell["head"]) if cell and cell["head"] is not None else (0, 0)
    # lazy: five charts that every new text would redraw, built only while the section is open
    steps = on_request("Step by step: the causal mask, and what each new character looked at", "gen_steps")
    if not steps.open:
        return
    with steps:
        label = "Characters shown in the steps below"
        window = range_slider("gen_window", 2, min(MAX_WINDOW, T), min(16, T), label=label, help="The last N characters.")
        full = result.notes["prompt"] + result.notes["new_text"]
        figs = causal_section(ck, full[-window:], layer, head)
        figs += step_section(ck, result, layer, window)
        export_view_button(figs, "Shakespeare generator", "gen-export", notes=f"Prompt and generated text:\n{full}")
        sync_url("gen_window", "gen_step")


st.title("Shakespeare generator")
st.caption(
    "A character-level transformer trained on Tiny Shakespeare writes one character at a time. It is causal: "
    "each character attends only to itself and to what came before."
)
ck = require_checkpoint(TASK)
controls(len(ck.vocabs["chars"]))
prompt = read_input(TASK, st.session_state["gen_prompt"], "prompt")
if prompt is None:
    st.stop()
next_char = on_request("The next character: how temperature and top-k choose it", "gen_next")
if next_char.open:  # lazy, like the steps below: a chart and two sliders, drawn only while open
    with next_char:
        sampling(ck, prompt)
temp, top_k = st.session_state["gen_used"]
length, seed = int(st.session_state["gen_length"]), int(st.session_state["gen_seed"])
result = attempt(run_generation, ck, prompt, length, float(temp), int(top_k), seed, what="Nothing to continue")
if result is None or not input_notes(result, "the prompt"):
    st.stop()
st.subheader("Generated text")
output_text(result.notes["prompt"] + result.notes["new_text"])
st.caption(
    f"The first {len(result.notes['prompt'])} characters are the prompt; the next {len(result.notes['new_text'])} "
    f"were sampled at temperature {temp:g}, top-k {top_k or 'all'}."
)
attention(ck, result)
attention_downloads("gen", "generator")
