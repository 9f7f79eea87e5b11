"""Shakespeare generator: sampling controls, the generated text, the causal mask step by step,
heatmaps per layer and head, and what the model looked at to write each new character."""

from __future__ import annotations

import numpy as np
import streamlit as st
import torch

from model.analysis.inference import generate, model_device
from model.analysis.maps import causal_steps, last_query_attention
from model.training.checkpoint import default_dir
from model.training.tokenize import encode_chars
from pages.shared.display import export_view_button, output_text, show_figure
from pages.shared.models import device, get_checkpoint, require_checkpoint
from pages.shared.state import bounded, init_state, keep_valid, sync_url
from pages.shared.text import listing, markdown_escape
from viz.attention import causal_step_figures, head_grid, heads_heatmap, query_bar, visible_chars, weights_frame

TASK = "generator"
DEFAULT_PROMPT = "ROMEO:"
MIN_LENGTH, MAX_LENGTH = 20, 400
MAX_WINDOW = 40  # characters per heatmap axis: readable on a projector
UNK = "<unk>"
STEP_TITLES = {"scores": "1. scores", "mask": "2. mask", "masked": "3. masked scores", "softmax": "4. softmax"}


@st.cache_data(max_entries=32, show_spinner="Writing…")
def run_generator(
    directory: str, dev: str, prompt: str, length: int, temperature: float, top_k: int, seed: int
) -> dict:
    """Plain results for one set of sampling controls; ``directory`` and ``dev`` key the cache."""
    g = generate(
        get_checkpoint(TASK, dev), prompt, length=length, temperature=temperature, top_k=top_k or None, seed=seed
    )
    return {
        "prompt": g.prompt,
        "new_text": g.new_text,
        "chars": g.chars,
        "attention": torch.stack([w[0] for w in g.attention.encoder]).numpy(),  # (layers, heads, T, T)
        "unknown": g.unknown,
        "truncated": g.truncated,
    }


def char_ids(text: str, dev: str) -> torch.Tensor:
    ck = get_checkpoint(TASK, dev)
    return torch.tensor([encode_chars(ck.vocabs["chars"], text)], device=model_device(ck))


@st.cache_data(max_entries=128, show_spinner=False)
def run_causal_steps(directory: str, dev: str, text: str, layer: int, head: int) -> dict[str, np.ndarray]:
    """The four causal-mask steps of one head over ``text``, as numpy."""
    s = causal_steps(get_checkpoint(TASK, dev).model, char_ids(text, dev), layer, head)
    parts = {"scores": s.scores[0], "mask": s.mask, "masked": s.masked[0], "softmax": s.weights[0]}
    return {k: v.cpu().numpy() for k, v in parts.items()}


@st.cache_data(max_entries=256, show_spinner=False)
def run_step(directory: str, dev: str, context: str) -> np.ndarray:
    """What the last character of ``context`` attended to, ``(layers, heads, keys)``."""
    rows = last_query_attention(get_checkpoint(TASK, dev).model, char_ids(context, dev))
    return torch.stack([r[0] for r in rows]).cpu().numpy()


def controls(vocab_size: int) -> None:
    init_state("gen_prompt", DEFAULT_PROMPT)
    init_state("gen_temp", 0.8, bounded(0.0, 2.0, float))
    init_state("gen_topk", 0, bounded(0, vocab_size))
    init_state("gen_length", 200, bounded(MIN_LENGTH, MAX_LENGTH))
    init_state("gen_seed", 0, bounded(0, 2**31 - 1))
    left, right = st.columns([2, 3])
    left.text_area("Prompt", key="gen_prompt", height=110, help="The model continues this text.")
    a, b = right.columns(2)
    a.slider("Temperature", 0.0, 2.0, step=0.1, key="gen_temp", help="0 always takes the likeliest character.")
    b.slider("Top-k", 0, vocab_size, key="gen_topk", help="Sample only among the k likeliest characters; 0 = all.")
    a.slider("Length (characters)", MIN_LENGTH, MAX_LENGTH, step=10, key="gen_length")
    b.number_input("Seed", 0, 2**31 - 1, step=1, key="gen_seed", help="The same seed gives the same text.")
    sync_url("gen_prompt", "gen_temp", "gen_topk", "gen_length", "gen_seed")


def seen(chars: list[str], vocab) -> list[str]:
    """Axis labels: what the model read, with whitespace made visible and unknown characters as <unk>."""
    return visible_chars([c if c in vocab else UNK for c in chars])


def causal_figures(text: str, vocab, layer: int, head: int, only: list[str]) -> tuple[dict, list[str], dict]:
    """The causal-mask steps ``only`` of one head over ``text``: (numbers, axis labels, figures by step)."""
    steps = run_causal_steps(str(default_dir(TASK)), device(), text, layer, head)
    labels = seen(list(text), vocab)
    figs = causal_step_figures(steps["scores"], steps["mask"], steps["masked"], steps["softmax"], labels, only=only)
    return steps, labels, figs


def grid_figure(g: dict, vocab, window: int):
    att = g["attention"]
    return head_grid(att[:, :, -window:, -window:], seen(g["chars"][-window:], vocab))


def causal_section(text: str, vocab, layer: int, head: int) -> None:
    st.subheader("The causal mask, step by step")
    st.caption(
        f"Layer {layer}, head {head}, reading only the last {len(text)} characters, so each row of the softmax "
        "sums to 1. A character may look at itself and at earlier characters, never at later ones: those "
        "would give away what comes next."
    )
    # lazy tabs: only the chosen step is built and drawn; choosing another reruns the fragment
    tabs = dict(zip(STEP_TITLES, st.tabs(list(STEP_TITLES.values()), key="gen_causal_tab", on_change="rerun")))
    shown = [name for name, tab in tabs.items() if tab.open]
    steps, labels, figs = causal_figures(text, vocab, layer, head, shown)
    for name, fig in figs.items():
        with tabs[name]:
            csv = weights_frame(steps["softmax"], labels) if name == "softmax" else None
            csv_name = f"generator-layer{layer}-head{head}-softmax.csv"
            show_figure(fig, f"gen-causal-{name}", csv=csv, csv_name=csv_name)


def step_section(g: dict, vocab, block: int, layer: int, window: int) -> list:
    """The chosen generated character: its per-head and mean attention; returns the two figures."""
    st.subheader("What the model looked at to write each new character")
    n_new = len(g["new_text"])
    init_state("gen_step", 1, bounded(1, n_new))
    keep_valid("gen_step", range(1, n_new + 1), 1)
    st.slider("Generated character n", 1, n_new, key="gen_step")
    n = st.session_state["gen_step"]
    full = g["prompt"] + g["new_text"]
    p = len(g["prompt"]) + n - 1  # position of character n in the full text
    context = full[:p][-block:]
    row = run_step(str(default_dir(TASK)), device(), context)[layer]  # (heads, keys)
    k = min(window, row.shape[1])
    keys = seen(list(context[-k:]), vocab)
    query = f"{k - 1}:{keys[-1]}"
    produced = markdown_escape(visible_chars([full[p]])[0])
    hidden = 1.0 - row[:, -k:].mean(axis=0).sum()
    st.caption(
        f"Character {n} is **{produced}**. To write it, the model's query was the character just before it "
        f"({markdown_escape(query)}), which attends over the context. Layer {layer}; the last {k} of "
        f"{len(context)} context characters are drawn"
        + (f" ({hidden:.0%} of the mean weight falls on earlier ones)." if hidden > 0.005 else ".")
    )
    heads = heads_heatmap(row[:, -k:], keys, query_label=query)
    show_figure(heads, "gen-step-heads")
    bar = query_bar(
        row[:, -k:].mean(axis=0), keys, query_label=query, title=f"mean over heads: what {query} attended to"
    )
    show_figure(bar, "gen-step-bar")
    return [heads, bar]


@st.fragment
def attention_views(g: dict, vocab, block: int) -> None:
    att = g["attention"]
    L, H, T = att.shape[:3]
    init_state("gen_layer", 0, bounded(0, L - 1))
    init_state("gen_head", 0, bounded(0, H - 1))
    init_state("gen_window", min(16, T), bounded(2, min(MAX_WINDOW, T)))
    keep_valid("gen_layer", range(L), 0)
    keep_valid("gen_head", range(H), 0)
    keep_valid("gen_window", range(2, min(MAX_WINDOW, T) + 1), min(16, T))
    a, b, c = st.columns(3)
    a.selectbox("Layer", range(L), key="gen_layer", format_func=lambda l: f"layer {l}")
    b.selectbox("Head", range(H), key="gen_head", format_func=lambda h: f"head {h}")
    c.slider("Characters shown", 2, min(MAX_WINDOW, T), key="gen_window", help="The last N characters.")
    layer, head, window = (st.session_state[k] for k in ("gen_layer", "gen_head", "gen_window"))
    full = g["prompt"] + g["new_text"]
    causal_section(full[-window:], vocab, layer, head)
    step_figs = step_section(g, vocab, block, layer, window)
    # lazy: the grid of every head is the page's largest chart, drawn only when opened
    grid = st.expander(f"Every head of every layer ({L} layers × {H} heads)", key="gen_grid_open", on_change="rerun")
    if grid.open:
        with grid:
            st.caption(
                f"The final context window of {T} characters, as the model read it while generating; the last "
                f"{window} queries and keys are drawn, so rows can sum to less than 1 (the rest goes to earlier "
                "characters)."
            )
            show_figure(grid_figure(g, vocab, window), "gen-grid")
    text = full[-window:]
    export = lambda: [*causal_figures(text, vocab, layer, head, list(STEP_TITLES))[2].values(), grid_figure(g, vocab, window), *step_figs]
    export_view_button(export, "Shakespeare generator", "gen-export", notes=f"Prompt and generated text:\n{full}")
    sync_url("gen_layer", "gen_head", "gen_window", "gen_step")


st.title("Shakespeare generator")
st.caption(
    "A character-level transformer trained on Tiny Shakespeare writes one character at a time. It is causal: "
    "each character attends only to itself and to what came before."
)
ck = require_checkpoint(TASK)
vocab = ck.vocabs["chars"]
block = ck.model.config.block_size
controls(len(vocab))
prompt = st.session_state["gen_prompt"] or ""
if not prompt.strip():
    st.warning("The prompt is empty. Type a few characters, e.g. ROMEO:")
    st.stop()
unknown = sorted({ch for ch in prompt[-block:] if ch not in vocab})
if not any(ch in vocab for ch in prompt[-block:]):
    st.warning(
        f"None of the prompt's characters are in the model's alphabet ({listing(visible_chars(unknown))}). "
        "Try plain English letters and punctuation."
    )
    st.stop()
if len(prompt) > block:
    st.info(f"The model reads at most {block} characters; only the last {block} of the prompt are used.")
if unknown:
    st.warning(
        f"{len(unknown)} character(s) are not in the model's alphabet and were read as `<unk>`: "
        f"{listing(visible_chars(unknown))}"
    )
g = run_generator(
    str(default_dir(TASK)),
    device(),
    prompt,
    int(st.session_state["gen_length"]),
    float(st.session_state["gen_temp"]),
    int(st.session_state["gen_topk"]),
    int(st.session_state["gen_seed"]),
)
st.subheader("Generated text")
output_text(g["prompt"] + g["new_text"])
st.caption(f"The first {len(g['prompt'])} characters are the prompt; the next {len(g['new_text'])} were sampled.")
attention_views(g, vocab, block)
