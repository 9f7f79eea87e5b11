"""A Streamlit app around the attention explorer at a model's full context, for
tests/browser/test_explorer_long.py and bench/long_inputs.py: random causal attention
(fixtures/long_runs.py), GPT-2-shaped by default (12 layers × 12 heads).

Query parameters: ``n`` tokens (default 1,024), ``layers``, ``heads``, ``kv`` (key/value heads:
grouped-query attention when fewer than ``heads``), ``window`` (a sliding window on the even layers, as
Gemma 2 has; 0: none). Typing a number in "tokens" and pressing Enter makes a new run of that length
(as a new text would), ``N:V`` the same run under another first token (new data, the same weights);
the app writes the clicked cell."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from anywhere: the repository root

from fixtures.long_runs import long_run  # noqa: E402
from pages.shared.explorer import attention_explorer  # noqa: E402


def number(name: str, default: int) -> int:
    raw = st.query_params.get(name, "")
    return int(raw) if raw.isdigit() else default


@st.cache_resource(max_entries=2)
def run(n: int, layers: int, heads: int, kv: int, window: int, seed: int):
    """The same run for every rerun and session (no copy: it is hundreds of MB at 1,024 tokens)."""
    return long_run(n, layers=layers, heads=heads, seed=seed, kv_heads=kv if kv < heads else 0, window=window)


st.set_page_config(layout="wide")  # as app.py: a 1,024-token map is 1,024 px wide
layers, heads, kv, window = number("layers", 12), number("heads", 12), number("kv", 0), number("window", 0)
raw, _, variant = st.text_input("tokens", key="tokens", help="N, or N:V for variant V of that run").partition(":")
n = int(raw) if raw.isdigit() and 2 <= int(raw) <= 1024 else number("n", 1024)
kinds = run(n, layers, heads, kv, window, seed=n)
if variant:  # the same weights under another first token: new data for the page (a benchmark's fresh send)
    k = kinds[0]
    kinds = [replace(k, queries=[variant, *k.queries[1:]], keys=[variant, *k.keys[1:]])]
cell = attention_explorer(kinds, key="explorer", url_prefix="t", title=f"long {n}")
st.text("clicked: " + json.dumps(cell))
