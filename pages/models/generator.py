"""Shakespeare generator: the next-character distribution under the sampling controls, the generated text,
the causal mask step by step, what the model looked at for each new character, every layer and head."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from model.core.checkpoint import Checkpoint
from model.core.results import RunResult
from pages import heading
from pages.models.sampling import drawn_from, sampling, sampling_used
from pages.shared.attribute import checkpoint_contributions
from pages.shared.display import export_view_button, output_text
from pages.shared.heads import head_roles
from pages.shared.models import model_card, require_checkpoint
from pages.shared.runs import attempt, input_notes, read_input, run_generation, run_model
from pages.shared.state import bounded, on_request, range_slider, url_widget
from pages.shared.steps import causal_steps, followed_head, generation_step
from pages.shared.text import be, plural
from pages.shared.views import attention_downloads, attention_views

MODEL = "generator"  # its description: model.core.specs.SPECS
DEFAULT_PROMPT = "ROMEO:"
MIN_LENGTH, MAX_LENGTH = 20, 400
MAX_SEED = 2**31 - 1


@dataclass(frozen=True)
class Options:
    prompt: str  # as typed
    length: int  # characters to write
    seed: int
    temperature: float  # the sampling the shown text is written with (the sliders may differ until asked)
    top_k: int  # 0: every character


def options(vocab_size: int) -> Options:
    temperature, top_k = sampling_used(vocab_size)
    left, right = st.columns([2, 3])
    hint = "The model continues this text."
    prompt = url_widget(left.text_area, "Prompt", "gen_prompt", DEFAULT_PROMPT, height=110, help=hint)
    a, b = right.columns(2)
    length = range_slider("gen_length", MIN_LENGTH, MAX_LENGTH, 200, label="Length (characters)", parent=a, step=10)
    seeds = dict(min_value=0, max_value=MAX_SEED, step=1, help="The same seed gives the same text.")
    seed = url_widget(b.number_input, "Seed", "gen_seed", 0, bounded(0, MAX_SEED), **seeds)
    return Options(prompt, int(length), int(seed), float(temperature), int(top_k))


def opening(ck: Checkpoint, result: RunResult) -> tuple[RunResult | None, str]:
    """The text's first characters (the prompt, then what the model wrote) as the model read them while
    writing, as many as the slider says (at first the spec's ``window``: a label each stays readable, a
    whole context of 128 does not), and the caption that says so. A causal model's attention over a
    text's first n characters is the same whatever follows them."""
    prompt, full = result.notes["prompt"], result.notes["prompt"] + result.notes["new_text"]
    hi = min(ck.model.config.block_size, len(full))
    hint = "From the start of the text: your prompt, then what the model wrote."
    n = range_slider(
        "gen_chars", min(8, hi), hi, min(ck.spec.window or hi, hi), label="Characters in the explorer", help=hint
    )
    p = min(len(prompt), n)
    what = f"your prompt ({plural(p, 'character')})" if p == len(prompt) else f"the first {p} of your prompt"
    if n > p:
        what += f" and the first {plural(n - p, 'character')} the model wrote"
    caption = (
        f"The text's first {n} characters: {what}, as the model read them while writing. The masked cells "
        "(hatched) are the future: a character never sees what comes after it. Colours run from 0 to the map's "
        "largest weight outside the first row: the first character can only attend to itself, so its weight is "
        "always 1 (drawn darkest). Click a weight to see how it was computed; the steps below follow the head "
        "you clicked."
    )
    return attempt(run_model, ck, full[:n], what="Nothing to show"), caption


@st.fragment
def attention(ck: Checkpoint, result: RunResult) -> None:
    st.subheader("Every layer and head")
    shown, caption = opening(ck, result)
    if shown is None:
        return
    st.caption(caption)
    title = "Shakespeare generator: " + result.notes["prompt"][:40]
    cell = attention_views(shown, "gen", ck=ck, title=title)
    checkpoint_contributions(ck, shown, "gen")
    head_roles(shown, MODEL)  # which of the head finder's heads play their role in the characters shown
    T = len(result.kinds["encoder"].keys)  # the steps below read the final context window
    layer, head = followed_head(shown, "gen", cell, "encoder")  # the explorer's head, not always layer 0, head 0
    # lazy: five charts that every new text would redraw, built only while the section is open
    steps = on_request("Step by step: the causal mask, and what each new character looked at", "gen_steps")
    if not steps.open:
        return
    with steps:
        label, hint = "Characters shown in the steps below", "The last N characters."
        window = range_slider("gen_window", 2, min(ck.spec.window, T), min(16, T), label=label, help=hint)
        full = result.notes["prompt"] + result.notes["new_text"]
        figs = causal_steps(ck, full[-window:], layer, head)
        figs += generation_step(ck, result, layer, window)
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
    n, m = len(result.notes["prompt"]), len(result.notes["new_text"])
    st.caption(
        f"The first {plural(n, 'character')} {be(n)} the prompt; the next {plural(m, 'character')} "
        f"{be(m, past=True)} sampled {drawn_from(temp, top_k)}."
    )
    attention(ck, result)
    attention_downloads("gen", MODEL)


def main() -> None:
    st.title(heading("generator"))
    st.caption(
        "A character-level transformer trained on Tiny Shakespeare writes one character at a time. It is causal: "
        "each character attends only to itself and to what came before."
    )
    ck = require_checkpoint(MODEL)
    body(ck, options(len(ck.vocabs["chars"])))
    model_card(ck)  # under the explorer, closed: how the model was made comes after what it does


main()
