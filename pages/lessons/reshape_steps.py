"""The reshape page's parts: the optional sentence read into tokens, one step drawn as a matrix view coloured
by head, and the checks (a per-head loop against the batched path, the parameter counts)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from model.lessons.hand import notebook_tokens
from model.lessons.reshape import Step
from pages.shared.display import show_matrix
from pages.shared.text import MAX_INPUT_CHARS, clean_text, plural
from viz.matrixview import matrix_panels, matrix_payload
from viz.reshape import step_payload

MAX_T = 8  # tokens per sequence: the page's largest t, and the most words of a sentence it uses
LOOP_CODE = """\
for item in x:                                   # each sequence (t, k)
    q, k, v = to_q(item), to_k(item), to_v(item)  # (t, h*s)
    heads = []
    for i in range(h):                           # each head: its own slice of columns
        cols = slice(i * s, (i + 1) * s)
        w = softmax(q[:, cols] @ k[:, cols].T / sqrt(s))
        heads.append(w @ v[:, cols])             # (t, s)
    out.append(combine(cat(heads, dim=-1)))      # (t, k): one linear layer"""


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
    """The batched path against a per-head loop, a module and the other scaling, then the parameters of narrow
    and wide heads."""
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
        f"Narrow: W_q, W_k, W_v and the layer that combines the heads are each k × k = {k}×{k}. Wide: W_q, W_k, "
        f"W_v are each (h·k) × k and the combining layer k × (h·k), so {plural(h, 'head')} cost {h}× as much. "
        "No biases here."
    )
