"""Random but valid attention for the explorer's tests, browser harness and benchmark: rows are a
softmax over the keys each query may see (exactly 0 where masked), tokens include markup, bidi
controls and repeats."""

from __future__ import annotations

import numpy as np

from model.core.results import AttentionKind, attention_kind, causal

MARKUP = "<img src=x onerror=alert(1)>"
GERMAN = ["ein", "Mann", MARKUP, "fährt", "ein", "Fahrrad", "\u202eevil", "."]
ENGLISH = ["<bos>", "a", "man", "rides", "a", MARKUP, "bike", "."]
SENTENCE = ["<cls>", "the", "film", "is", MARKUP, "the", "best", "Donaudampfschifffahrtsgesellschaft", "!"]


def softmax_maps(rng: np.random.Generator, layers: int, heads: int, mask: np.ndarray) -> np.ndarray:
    """``(layers, heads, queries, keys)`` float32 rows that sum to 1 over the visible keys."""
    logits = rng.normal(scale=2.0, size=(layers, heads, *mask.shape))
    logits = np.where(mask, logits, -np.inf)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)).astype(np.float32)


def tokens(base: list[str], n: int) -> list[str]:
    """``n`` tokens cycling through ``base`` (so long runs repeat words)."""
    return [base[i % len(base)] for i in range(n)]


def translator_run(
    seed: int = 0, *, src: int = 8, tgt: int = 8, layers: int = 2, heads: int = 3, src_words=GERMAN, tgt_words=ENGLISH
) -> list[AttentionKind]:
    """Encoder self-, decoder causal self- and cross-attention, like the translator's."""
    rng = np.random.default_rng(seed)
    de, en = tokens(src_words, src), tokens(tgt_words, tgt)
    full = np.ones((src, src), dtype=bool)
    return [
        attention_kind("encoder", softmax_maps(rng, layers, heads, full), de, de, title="Encoder self-attention",
                       axes=("query = German", "key = German")),
        attention_kind("decoder", softmax_maps(rng, layers, heads, causal(tgt)), en, en, mask=causal(tgt)),
        attention_kind("cross", softmax_maps(rng, layers, heads, np.ones((tgt, src), dtype=bool)), en, de),
    ]  # fmt: skip


def classifier_run(seed: int = 1, *, n: int = len(SENTENCE), layers: int = 2, heads: int = 4) -> list[AttentionKind]:
    """One kind of self-attention, like the classifier's; the last key is padding (masked)."""
    rng = np.random.default_rng(seed)
    words = tokens(SENTENCE, n - 1) + ["<pad>"]
    mask = np.ones((n, n), dtype=bool)
    mask[:, -1] = False
    special = [w.startswith("<") and w.endswith(">") and w != MARKUP for w in words]
    return [attention_kind("encoder", softmax_maps(rng, layers, heads, mask), words, words, mask=mask, special=special)]


def generator_run(seed: int = 2, *, n: int = 128, layers: int = 4, heads: int = 6) -> list[AttentionKind]:
    """Causal self-attention over ``n`` characters, like the generator's."""
    rng = np.random.default_rng(seed)
    chars = list(("To be, or not to be, that is the question:\n" * (n // 40 + 1))[:n])
    return [attention_kind("decoder", softmax_maps(rng, layers, heads, causal(n)), chars, chars, mask=causal(n),
                           title="Causal self-attention", axes=("query", "key"))]  # fmt: skip


def rollout_of(kind: AttentionKind) -> np.ndarray:
    """A simple rollout (mean over heads, identity mixed in, multiplied over layers), rows summing to 1."""
    n = kind.weights.shape[-1]
    out = np.eye(n)
    for layer in kind.weights.mean(1):
        a = 0.5 * layer + 0.5 * np.eye(n)
        out = (a / a.sum(-1, keepdims=True)) @ out
    return out.astype(np.float32)
