"""What the head-ablation and minimal-pairs pages share: cached runs of any of the three models
as plain results (dicts, lists, numpy), with or without heads switched off, the axis names of
each kind of attention, and the input checks.

Every run goes through ``model.analysis.ablation`` on the one cached model; heads are switched off only
through ``head_mask`` arguments.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
import torch

from model.analysis.ablation import Head, ablate, attention_delta, run
from model.analysis.inference import SENTIMENT_LABELS
from model.nets.blocks import AttentionMaps
from model.training.tokenize import EOS, SOS, UNK
from pages.shared.models import get_checkpoint
from pages.shared.text import MAX_INPUT_CHARS, clean_text, listing
from viz.attention import visible_chars

TASKS = ("classifier", "generator", "translator")
TASK_NAMES = {
    "classifier": "Sentiment classifier",
    "generator": "Shakespeare generator",
    "translator": "Translator (de → en)",
}
SHORT = {"classifier": "cls", "generator": "gen", "translator": "tr"}
INPUT_NAMES = {"classifier": "English sentence", "generator": "Prompt", "translator": "German sentence"}
KINDS = {  # kind -> (name, query axis, key axis, (row tokens, column tokens)) per task
    "classifier": {"encoder": ("Self-attention", "query", "key", ("tokens", "tokens"))},
    "generator": {"encoder": ("Causal self-attention", "query character", "key character", ("tokens", "tokens"))},
    "translator": {
        "encoder": ("Encoder self-attention", "query = German", "key = German", ("src", "src")),
        "decoder": ("Decoder self-attention", "query = English output", "key = English so far", ("out", "in")),
        "cross": ("Cross-attention", "query = English", "key = German", ("out", "src")),
    },
}
GENERATOR_WINDOW = 40  # characters per heatmap axis: the last ones, readable on a projector


def _stack(maps: AttentionMaps, kinds) -> dict[str, np.ndarray]:
    """Batch item 0 of each kind as ``(layers, heads, queries, keys)``."""
    return {kind: torch.stack([w[0] for w in getattr(maps, kind)]).float().numpy() for kind in kinds}


def _plain(task: str, r) -> dict:
    """A ``model.analysis.ablation`` result as plain data: tokens per axis, attention per kind, the prediction."""
    if task == "classifier":
        unknown = set(r.unknown)
        labels = SENTIMENT_LABELS if len(r.probs) == 2 else tuple(map(str, range(len(r.probs))))
        return {
            "tokens": [f"{t} (unk)" if t in unknown else t for t in r.tokens],
            "probs": dict(zip(labels, r.probs)),
            "label": r.label,
            "unknown": r.unknown,
            "n_unknown": len(r.unknown),
            "n_read": len(r.tokens),
            "truncated": r.truncated,
            "attention": _stack(r.attention, ["encoder"]),
        }
    if task == "generator":
        unknown = set(r.unknown)
        probs = dict(zip(visible_chars(list(r.probs)), r.probs.values()))
        return {
            "tokens": visible_chars([UNK if ch in unknown else ch for ch in r.chars]),
            "probs": probs,
            "label": max(probs, key=probs.get),
            "unknown": r.unknown,
            "n_unknown": sum(ch in unknown for ch in r.chars),
            "n_read": len(r.chars),
            "truncated": r.truncated,
            "attention": _stack(r.attention, ["encoder"]),
        }
    unknown = set(r.unknown)
    return {
        "src": [f"{t} (unk)" if t in unknown and t not in (SOS, EOS) else t for t in r.src_tokens],
        "in": r.tgt_in,
        "out": r.tgt_out,
        "text": r.text,
        "unknown": r.unknown,
        "n_unknown": len(r.unknown),
        "n_read": len(r.src_tokens) - 2,
        "truncated": r.truncated,
        "attention": _stack(r.attention, KINDS["translator"]),
    }


@st.cache_data(max_entries=64, show_spinner="Running the model…")
def run_plain(directory: str, dev: str, task: str, text: str) -> dict:
    """One input through the model with every head on; ``directory`` and ``dev`` key the cache."""
    try:
        return _plain(task, run(get_checkpoint(task, dev), text))
    except ValueError as e:
        return {"error": str(e)}


@st.cache_data(max_entries=64, show_spinner="Switching heads off…")
def run_ablation(directory: str, dev: str, task: str, text: str, off: tuple[Head, ...]) -> dict:
    """``before`` (all heads on), ``after`` (heads in ``off`` switched off) and ``delta`` = before − after.

    ``after`` holds the ablated prediction, but its attention is the ablated model's on the tokens
    of ``before`` (for the translator: the unablated translation, teacher-forced), so the two
    subtract cell by cell.
    """
    try:
        a = ablate(get_checkpoint(task, dev), text, off)
    except ValueError as e:
        return {"error": str(e)}
    kinds = list(KINDS[task])
    before, after = _plain(task, a.before), _plain(task, a.after)
    after_maps = _stack(a.after_maps, kinds)
    after = {**after, **{k: before[k] for k in ("tokens", "src", "in", "out") if k in before}, "attention": after_maps}
    return {"before": before, "after": after, "delta": _stack(attention_delta(a.before.attention, a.after_maps), kinds)}


def axis_tokens(result: dict, task: str, kind: str) -> tuple[list[str], list[str]]:
    """The (query, key) token lists that label ``kind``'s attention in ``result``."""
    rows, cols = KINDS[task][kind][3]
    return list(result[rows]), list(result[cols])


def read_input(task: str, text: str | None, what: str) -> str | None:
    """The text to run, or None after a message. Prompts keep their spaces: they matter to the generator."""
    if task != "generator":
        return clean_text(text, what=what)
    text = text or ""
    if not text.strip():
        st.warning(f"The {what} is empty. Type a few characters, e.g. ROMEO:")
        return None
    if len(text) > MAX_INPUT_CHARS:
        text = text[-MAX_INPUT_CHARS:]  # the generator reads the end of a prompt
    return text


def input_ok(task: str, result: dict, *, limit: int, what: str = "the input") -> bool:
    """Say what the model could not read; False when it would only see unknown tokens."""
    unit = "characters" if task == "generator" else "words"
    if result["truncated"]:
        part = "last" if task == "generator" else "first"
        st.info(f"The model reads at most {limit} {unit}; only the {part} {limit} of {what} are used.")
    unknown = sorted(set(result["unknown"]))
    shown = listing(visible_chars(unknown)) if task == "generator" else listing(unknown)
    if result["n_unknown"] == result["n_read"]:
        st.warning(
            f"None of the {unit} of {what} are in the model's vocabulary ({shown}), so it would only see "
            f"`<unk>`. Try one of the defaults."
        )
        return False
    if unknown:
        st.warning(
            f"{len(unknown)} {unit[:-1]}(s) of {what} are not in the vocabulary and were read as `<unk>`: {shown}"
        )
    return True


def limit(task: str, ck) -> int:
    """How many words or characters the model reads."""
    c = ck.model.config
    return c.block_size if task == "generator" else c.max_len - 2 if task == "translator" else c.max_len


def window(m: np.ndarray, task: str) -> tuple[np.ndarray, slice]:
    """The generator's attention cut to its last ``GENERATOR_WINDOW`` queries and keys (others whole)."""
    if task != "generator" or m.shape[-1] <= GENERATOR_WINDOW:
        return m, slice(None)
    cut = slice(-GENERATOR_WINDOW, None)
    return m[..., cut, cut], cut


def points(delta: float) -> str:
    """A change of probability in percentage points, e.g. "+1.5 pp" (never "-0.0")."""
    return "±0.0 pp" if abs(delta) < 0.0005 else f"{100 * delta:+.1f} pp"
