"""Multi-head reshape: every step of batched multi-head self-attention, coloured by head."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from model.lessons.hand import notebook_tokens
from model.lessons.reshape import Step, input_tensor, reshape_steps
from ui.shared.display import csv_button, show_matrix
from ui.shared.state import bounded, init_state, one_of, sync_url
from ui.shared.text import MAX_INPUT_CHARS, clean_text, plural
from viz.matrixview import matrix_panels, matrix_payload
from viz.reshape import step_payload, steps_frame

MAX_B, MAX_T, MAX_K, MAX_H = 2, 8, 32, 8
KINDS = {"narrow": "narrow: split k into h slices", "wide": "wide: every head is k wide"}
SCALINGS = {"sqrt": "q·k / √s", "split": "(q / s^¼)·(k / s^¼)"}
URL_KEYS = (
    "reshape_b",
    "reshape_t",
    "reshape_k",
    "reshape_h",
    "reshape_kind",
    "reshape_scale",
    "reshape_seed",
    "reshape_text",
)
LOOP_CODE = """\
for item in x:                                   # each sequence (t, k)
    q, k, v = to_q(item), to_k(item), to_v(item)  # (t, h*s)
    heads = []
    for i in range(h):                           # each head: its own slice of columns
        cols = slice(i * s, (i + 1) * s)
        w = softmax(q[:, cols] @ k[:, cols].T / sqrt(s))
        heads.append(w @ v[:, cols])             # (t, s)
    out.append(unify(cat(heads, dim=-1)))        # (t, k)"""


@dataclass(frozen=True)
class Options:
    b: int  # batch
    t: int  # tokens per sequence, when there is no sentence
    k: int  # width
    h: int  # heads
    wide: bool  # every head is k wide (else k is split into h slices)
    split_scale: bool  # scale q and k by s^¼ each (else q·k by √s)
    seed: int
    text: str  # the optional sentence


def options() -> Options:
    init_state("reshape_b", 2, bounded(1, MAX_B))
    init_state("reshape_t", 4, bounded(2, MAX_T))
    init_state("reshape_k", 8, bounded(1, MAX_K))
    init_state("reshape_h", 2, bounded(1, MAX_H))
    init_state("reshape_kind", "narrow", one_of(list(KINDS)))
    init_state("reshape_scale", "sqrt", one_of(list(SCALINGS)))
    init_state("reshape_seed", 0, bounded(0, 2**31 - 1))
    init_state("reshape_text", "")
    cols = st.columns(5)
    cols[0].number_input("batch b", 1, MAX_B, step=1, key="reshape_b")
    from_sentence = sentence_length(st.session_state["reshape_text"])
    if from_sentence:  # t follows the sentence: show its t, not the random input's
        cols[1].number_input(
            "tokens t",
            value=from_sentence,
            disabled=True,
            key=f"reshape_t_sentence_{from_sentence}",
            help="t is the sentence's number of words; clear the sentence to choose t.",
        )
    else:
        cols[1].number_input("tokens t", 2, MAX_T, step=1, key="reshape_t")
    cols[2].number_input("width k", 1, MAX_K, step=1, key="reshape_k")
    cols[3].number_input("heads h", 1, MAX_H, step=1, key="reshape_h")
    cols[4].number_input("seed", 0, 2**31 - 1, step=1, key="reshape_seed", help="Seeds the input and the weights.")
    left, right = st.columns(2)
    left.radio("Heads", list(KINDS), format_func=KINDS.get, key="reshape_kind", horizontal=True)
    right.radio("Scaling", list(SCALINGS), format_func=SCALINGS.get, key="reshape_scale", horizontal=True)
    st.text_input(
        "Optional sentence",
        key="reshape_text",
        placeholder="e.g. Life is short, eat dessert first.",
        help=f"Its first {MAX_T} words (seeded random embeddings) replace the random input; t follows the sentence.",
    )
    sync_url(*URL_KEYS)
    s = st.session_state
    wide, split = s.reshape_kind == "wide", s.reshape_scale == "split"
    return Options(s.reshape_b, s.reshape_t, s.reshape_k, s.reshape_h, wide, split, s.reshape_seed, s.reshape_text)


def sentence_length(raw: str) -> int:
    """How many tokens of the optional sentence the page uses (0: none, random input)."""
    return min(len(notebook_tokens((raw or "").strip()[:MAX_INPUT_CHARS])), MAX_T)


def sentence_tokens(raw: str) -> list[str] | None:
    """Tokens of the optional sentence, or None for random input; notes what was changed."""
    if not raw:
        return None
    text = clean_text(raw, what="sentence")
    if text is None:
        st.info("Using random vectors instead of a sentence.")
        return None
    tokens = notebook_tokens(text)
    if not tokens:
        st.warning("The sentence has no words (commas are dropped); using random vectors instead.")
        return None
    if len(tokens) > MAX_T:
        st.info(f"The sentence has {len(tokens)} tokens; only the first {MAX_T} are used.")
        tokens = tokens[:MAX_T]
    if len(tokens) < 2:
        st.info("One token attends only to itself; add a word to see weights spread out.")
    return tokens


def show_step(i: int, step: Step, heads: int, tokens: list[str] | None) -> None:
    """One step as one bordered view: its name and shape, its note, and its tensors (queries, keys and
    values under tabs the browser switches, with no rerun)."""
    tensors = {"queries": step.tensor, **step.others} if step.others else {"": step.tensor}
    panels = {
        role: step_payload(
            tensor,
            step.head_of,
            step.dims,
            heads=heads,
            tokens=tokens,
            name=f"{step.name} · {role}" if role else step.name,
        )
        for role, tensor in tensors.items()
    }
    shape = f"({', '.join(step.dims)}) = {step.shape}"
    show_matrix(matrix_panels(panels, heading=f"{i}. {step.name}", code=shape, note=step.note), f"reshape-{i}")


def checks(result, k: int, h: int) -> None:
    st.subheader("Checks")
    cols = st.columns(3)
    cols[0].metric("per-head loop vs batched: max |diff|", f"{result.loop_diff:.2e}")
    cols[1].metric("module forward vs batched: max |diff|", f"{result.module_diff:.2e}")
    cols[2].metric("q·k/√s vs (q/s^¼)·(k/s^¼): max |diff|", f"{result.scaling_diff:.2e}")
    st.caption("Differences around 1e-7 are float32 rounding: the batched reshape computes exactly the per-head loop.")
    # lazy: the code's syntax highlighter is a 1.5 MB download for the browser, so it is drawn only when opened
    loop = st.expander("The per-head loop used for the check", key="reshape_loop", on_change="rerun")
    if loop.open:
        with loop:
            st.code(LOOP_CODE, language="python")
    st.subheader("Parameters: narrow vs wide")
    narrow, wide = result.params["narrow"], result.params["wide"]
    cols = st.columns(2)
    cols[0].metric("narrow heads (4k²)", f"{narrow:,}" if narrow is not None else "k % h ≠ 0")
    cols[1].metric("wide heads (4hk²)", f"{wide:,}")
    kept = {name: n for name, n in result.params.items() if n is not None}
    table = pd.DataFrame({"heads": list(kept), "parameters": list(kept.values())})
    counts = matrix_payload(
        [list(kept.values())],
        ["parameters"],
        list(kept),
        name="parameters of the attention layer",
        row_title="",
        col_title="heads",
        decimals=0,
    )
    show_matrix(counts, "reshape-params", csv=table, csv_name="parameters.csv")
    st.caption(
        f"Narrow: W_q, W_k, W_v and the unifying layer are each k × k = {k}×{k}. Wide: W_q, W_k, W_v are each "
        f"(h·k) × k and the unifying layer k × (h·k), so {plural(h, 'head')} cost {h}× as much. No biases here."
    )


def body(opts: Options) -> None:
    """Every step of the batched computation for the chosen sizes, then the checks against a per-head loop."""
    b, k, h, wide = opts.b, opts.k, opts.h, opts.wide
    if not wide and k % h:
        fits = sorted({max(h, k - k % h), k - k % h + h})
        st.warning(
            f"Narrow heads split the width k = {k} into h = {h} equal slices, so k must be divisible by h. "
            f"Try k = {' or '.join(map(str, fits))}, or choose wide heads."
        )
        return
    tokens = sentence_tokens(opts.text)
    t = len(tokens) if tokens else opts.t
    if tokens:
        st.caption(f"t = {t} from the sentence.")
    x = input_tensor(b, t, k, seed=opts.seed, tokens=tokens)
    result = reshape_steps(x, h, wide=wide, split_scale=opts.split_scale, seed=opts.seed)
    st.caption(f"s = {result.head_dim} numbers per head ({'wide: s = k' if wide else 'narrow: s = k / h'}).")
    for i, step in enumerate(result.steps, start=1):
        show_step(i, step, h, tokens)
    csv_button(
        lambda: steps_frame(result.steps), "reshape-steps", "reshape_steps.csv", label="Download every step (CSV)"
    )
    checks(result, k, h)


def main() -> None:
    st.title("Multi-head reshape")
    st.markdown(
        "How one batched computation runs all heads at once: project, view, transpose, fold the heads into the "
        "batch, two batched matrix products, then undo the reshapes. Colour shows which head each number belongs "
        "to; follow one colour down the page."
    )
    body(options())


main()
