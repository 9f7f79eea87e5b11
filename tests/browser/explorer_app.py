"""A tiny Streamlit app around the attention explorer, for the browser tests and bench/explorer.py.

``?case=`` picks the run: ``translator`` (3 kinds × 2 layers × 3 heads), ``classifier`` (1 kind,
with rollout), ``bench_translator`` (3 kinds × 6 layers × 8 heads at 25 tokens) or
``bench_generator`` (1 kind × 4 layers × 6 heads at 128 characters). Typing a number in "sentence"
makes a new run with that many tokens (as a new sentence would); the app writes the clicked cell and
the query parameters the server saw."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from anywhere: the repository root

from fixtures.explorer_runs import classifier_run, generator_run, rollout_of, translator_run  # noqa: E402
from pages.shared.explorer import attention_explorer, explorer_download  # noqa: E402

CASES = {
    "translator": lambda n: translator_run(src=n, tgt=n),
    "classifier": lambda n: classifier_run(n=n),
    "bench_translator": lambda n: translator_run(src=n or 25, tgt=n or 25, layers=6, heads=8),
    "bench_generator": lambda n: generator_run(n=n or 128),
}

if "case" not in st.session_state:  # the first run's URL decides, so later URL changes cannot switch it
    st.session_state.case = st.query_params.get("case", "translator")
    st.session_state.projector = st.query_params.get("projector") == "1"
case = st.session_state.case if st.session_state.case in CASES else "translator"
raw = st.text_input("sentence", key="sentence", help="a token count: a new run of that length")
n = int(raw) if raw.isdigit() and 2 <= int(raw) <= 200 else {"translator": 8, "classifier": 9}.get(case, 0)
kinds = CASES[case](n)
rollout = rollout_of(kinds[0]) if case == "classifier" else None
st.button("Rerun")
cell = attention_explorer(kinds, key="explorer", url_prefix="t", rollout=rollout, title=f"harness {case}")
if cell is not None:
    st.session_state.last_cell = cell
st.text("clicked: " + json.dumps(st.session_state.get("last_cell")))
st.text("server url: " + json.dumps(st.query_params.to_dict(), sort_keys=True))
explorer_download(kinds, f"Harness {case}", key="download", rollout=rollout)
