"""Shakespeare generator: the next-character distribution under the sampling controls, the generated text,
the causal mask step by step, what the model looked at for each new character, every layer and head."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from model.analysis.runs import chars_read
from model.core.checkpoint import Checkpoint
from model.core.inference import reshaped
from model.core.results import RunResult
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
from ui.shared.state import bounded, init_state, on_request, one_of, range_slider, sync_url, url_widget
from ui.shared.text import markdown_escape
from ui.shared.views import attention_downloads, attention_views
from viz.attention import causal_step_figures, visible_chars, weights_frame
from viz.compare import distribution_bars, visible_probs
from viz.steps import step_figures

MODEL = "generator"  # its description: model.core.specs.SPECS
DEFAULT_PROMPT = "ROMEO:"
MIN_LENGTH, MAX_LENGTH = 20, 400
STEP_TITLES = {"scores": "1. scores", "mask": "2. mask", "masked": "3. masked scores", "softmax": "4. softmax"}
SAMPLING = ("gen_temp", "gen_topk")
MAX_SEED = 2**31 - 1
TEMPERATURE = dict(min_value=0.0, max_value=2.0, step=0.1)


@dataclass(frozen=True)
class Options:
    prompt: str  # as typed
    length: int  # characters to write
    seed: int
    temperature: float  # the sampling the shown text is written with (the sliders may differ until asked)
    top_k: int  # 0: every character


def options(vocab_size: int) -> Options:
    init_state("gen_temp", 0.8, bounded(0.0, 2.0, float))
    init_state("gen_topk", 0, bounded(0, vocab_size))
    if "gen_used" not in st.session_state:  # the sampling settings the shown text was written with
        st.session_state["gen_used"] = tuple(st.session_state[k] for k in SAMPLING)
    left, right = st.columns([2, 3])
    hint = "The model continues this text."
    prompt = url_widget(left.text_area, "Prompt", "gen_prompt", DEFAULT_PROMPT, height=110, help=hint)
    a, b = right.columns(2)
    length = range_slider("gen_length", MIN_LENGTH, MAX_LENGTH, 200, label="Length (characters)", parent=a, step=10)
    seeds = dict(min_value=0, max_value=MAX_SEED, step=1, help="The same seed gives the same text.")
    seed = url_widget(b.number_input, "Seed", "gen_seed", 0, bounded(0, MAX_SEED), **seeds)
    temperature, top_k = st.session_state["gen_used"]
    return Options(prompt, int(length), int(seed), float(temperature), int(top_k))


def write_again() -> None:
    st.session_state["gen_used"] = tuple(st.session_state[k] for k in SAMPLING)


@st.fragment
def sampling(ck: Checkpoint, prompt: str) -> None:
    """Temperature and top-k reshape the next-character distribution here and now; the text below is
    written again only when asked (a new text costs a whole generation)."""
    a, b = st.columns(2)
    hint = "0 always takes the likeliest character."
    temp = url_widget(a.slider, "Temperature", "gen_temp", 0.8, bounded(0.0, 2.0, float), **TEMPERATURE, help=hint)
    hint = "Sample only among the k likeliest characters; 0 = all."
    top_k = range_slider("gen_topk", 0, len(ck.vocabs["chars"]), 0, label="Top-k", parent=b, help=hint)
    nxt = attempt(run_model, ck, prompt)
    if nxt is None:
        return
    plain = visible_probs(nxt.probs)
    shaped = reshaped(plain, temp, top_k or None)
    names = ("temperature 1, every character", f"temperature {temp:g}, top-k {top_k or 'all'}")
    title = "what comes after the prompt: the 10 likeliest characters"
    fig = distribution_bars(plain, shaped, names=names, title=title, x_title="next character")
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
        label, hint = "Characters shown in the steps below", "The last N characters."
        window = range_slider("gen_window", 2, min(ck.spec.window, T), min(16, T), label=label, help=hint)
        full = result.notes["prompt"] + result.notes["new_text"]
        figs = causal_section(ck, full[-window:], layer, head)
        figs += step_section(ck, result, layer, window)
        export_view_button(figs, "Shakespeare generator", "gen-export", notes=f"Prompt and generated text:\n{full}")


def body(ck: Checkpoint, opts: Options) -> None:
    """The next character (on request), the generated text and its attention."""
    prompt = read_input(ck.spec, opts.prompt, "prompt")
    if prompt is None:
        return
    next_char = on_request("The next character: how temperature and top-k choose it", "gen_next")
    if next_char.open:  # lazy, like the steps below: a chart and two sliders, drawn only while open
        with next_char:
            sampling(ck, prompt)
    temp, top_k = opts.temperature, opts.top_k
    result = attempt(run_generation, ck, prompt, opts.length, temp, top_k, opts.seed, what="Nothing to continue")
    if result is None or not input_notes(result, "the prompt"):
        return
    st.subheader("Generated text")
    output_text(result.notes["prompt"] + result.notes["new_text"])
    st.caption(
        f"The first {len(result.notes['prompt'])} characters are the prompt; the next {len(result.notes['new_text'])} "
        f"were sampled at temperature {temp:g}, top-k {top_k or 'all'}."
    )
    attention(ck, result)
    attention_downloads("gen", MODEL)


def main() -> None:
    st.title("Shakespeare generator")
    st.caption(
        "A character-level transformer trained on Tiny Shakespeare writes one character at a time. It is causal: "
        "each character attends only to itself and to what came before."
    )
    ck = require_checkpoint(MODEL)
    body(ck, options(len(ck.vocabs["chars"])))


main()
