"""The worked example of Sebastian Raschka's blog post "Understanding and coding the self-attention
mechanism" on any sentence (one head or several), and the weight-free attention of Peter Bloem's
"Transformers from scratch": the Hand-worked page's lesson.

All randomness comes from a local ``torch.Generator``: the global RNG, which the app shares between
sessions, is never touched, yet the numbers equal the ``torch.manual_seed`` ones the post prints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

MAX_SIZE = 512  # upper bound for every width; the walk-through is for looking at, not for scale


def notebook_tokens(sentence: str) -> list[str]:
    """Tokens as Raschka's worked example makes them: commas dropped, split on whitespace, case kept."""
    return sentence.replace(",", "").split()


def spacy_tokens(sentence: str) -> list[str]:
    """The project's spaCy tokens (blank English): lower-cased, punctuation split off."""
    from model.core.tokenize import tokenize  # lazy: spaCy is slow to import and the default never needs it

    return tokenize(sentence, "en")


TOKENIZERS = {"notebook": notebook_tokens, "spacy": spacy_tokens}


def _check_size(name: str, value: int) -> None:
    if not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
        raise ValueError(f"{name} must be a whole number from 1 to {MAX_SIZE}; got {value!r}")


def _tokens(sentence: str, tokenizer: str, max_tokens: int | None) -> tuple[list[str], int]:
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {sorted(TOKENIZERS)}; got {tokenizer!r}")
    tokens = TOKENIZERS[tokenizer](sentence or "")
    if not tokens:
        raise ValueError("The sentence has no tokens: type at least one word (commas alone are dropped).")
    dropped = 0
    if max_tokens is not None and len(tokens) > max_tokens:
        dropped = len(tokens) - max_tokens
        tokens = tokens[:max_tokens]
    return tokens, dropped


def embed_tokens(tokens: list[str], d: int, generator: torch.Generator) -> tuple[dict[str, int], Tensor, Tensor]:
    """Vocabulary (sorted unique words -> index), ids and ``(T, d)`` embeddings.

    The table is drawn like ``nn.Embedding(len(vocab), d)`` after ``torch.manual_seed``: standard
    normal values, row by row, from ``generator``. Seed 002 builds its dictionary from the sorted
    words with duplicates; here repeated words share one entry, which is the same for a sentence
    without repeats and gives every word one row of the table.
    """
    vocab = {word: i for i, word in enumerate(sorted(set(tokens)))}
    ids = torch.tensor([vocab[t] for t in tokens])
    table = torch.empty(len(vocab), d).normal_(generator=generator)
    return vocab, ids, table[ids]


def _draw_projections(g: torch.Generator, d: int, d_q: int, d_k: int, d_v: int) -> tuple[Tensor, Tensor, Tensor]:
    # uniform [0, 1) like torch.rand, in the worked example's order: queries, keys, values
    return torch.rand(d_q, d, generator=g), torch.rand(d_k, d, generator=g), torch.rand(d_v, d, generator=g)


@dataclass(frozen=True, eq=False)
class Walkthrough:
    """Every intermediate of one attention head on one sentence (the worked example's names and shapes).

    ``scores`` are unnormalised ``q_i · k_j``; ``weights`` are ``softmax(scores / sqrt(d_k))`` per
    row (query ``i`` attends to key ``j``); ``context`` row ``i`` is ``weights[i] @ values``.
    """

    tokens: list[str]
    vocab: dict[str, int]
    ids: Tensor  # (T,)
    embeddings: Tensor  # (T, d)
    W_query: Tensor  # (d_q, d)
    W_key: Tensor  # (d_k, d)
    W_value: Tensor  # (d_v, d)
    queries: Tensor  # (T, d_q)
    keys: Tensor  # (T, d_k)
    values: Tensor  # (T, d_v)
    scores: Tensor  # (T, T)
    weights: Tensor  # (T, T)
    context: Tensor  # (T, d_v)
    dropped: int = 0  # tokens cut off by max_tokens


@dataclass(frozen=True, eq=False)
class MultiHeadWalkthrough:
    """Several heads on one sentence; per-head tensors are stacked on a leading head axis.

    ``heads[0]`` is exactly the single-head walk-through. Head ``i > 0`` draws its own W_query,
    W_key, W_value (in that order) from the same generator, after head ``i - 1``'s.
    """

    heads: list[Walkthrough]
    W_query: Tensor  # (h, d_q, d)
    W_key: Tensor  # (h, d_k, d)
    W_value: Tensor  # (h, d_v, d)
    scores: Tensor  # (h, T, T)
    weights: Tensor  # (h, T, T)
    context: Tensor  # (h, T, d_v)
    concat: Tensor  # (T, h * d_v): each token's head outputs side by side

    @property
    def tokens(self) -> list[str]:
        return self.heads[0].tokens


def _attend_by_hand(base: dict, x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, dropped: int) -> Walkthrough:
    queries, keys, values = x @ w_q.T, x @ w_k.T, x @ w_v.T  # the worked example: W·x for every token
    scores = queries @ keys.T
    weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
    return Walkthrough(
        **base,
        embeddings=x,
        W_query=w_q,
        W_key=w_k,
        W_value=w_v,
        queries=queries,
        keys=keys,
        values=values,
        scores=scores,
        weights=weights,
        context=weights @ values,
        dropped=dropped,
    )


def multi_head_walkthrough(
    sentence: str = "Life is short, eat dessert first.",
    *,
    heads: int = 2,
    seed: int = 123,
    d: int = 16,
    d_q: int = 24,
    d_k: int = 24,
    d_v: int = 28,
    tokenizer: str = "notebook",
    max_tokens: int | None = None,
) -> MultiHeadWalkthrough:
    """The walk-through with ``heads`` independent heads; see :class:`MultiHeadWalkthrough`.

    Random draws, all from one generator, in this order: seed, embedding table; seed again,
    head 0's W_query, W_key, W_value; head 1's; and so on.
    """
    for name, value in (("d", d), ("d_q", d_q), ("d_k", d_k), ("d_v", d_v), ("heads", heads)):
        _check_size(name, value)
    if d_q != d_k:
        raise ValueError(f"d_q ({d_q}) must equal d_k ({d_k}): each score is a dot product of a query and a key")
    tokens, dropped = _tokens(sentence, tokenizer, max_tokens)
    g = torch.Generator().manual_seed(seed)
    vocab, ids, x = embed_tokens(tokens, d, g)
    g.manual_seed(seed)  # the worked example seeds again before drawing the projections
    base = dict(tokens=tokens, vocab=vocab, ids=ids)
    per_head = [_attend_by_hand(base, x, *_draw_projections(g, d, d_q, d_k, d_v), dropped) for _ in range(heads)]

    def stack(name: str) -> Tensor:
        return torch.stack([getattr(h, name) for h in per_head])

    return MultiHeadWalkthrough(
        heads=per_head,
        W_query=stack("W_query"),
        W_key=stack("W_key"),
        W_value=stack("W_value"),
        scores=stack("scores"),
        weights=stack("weights"),
        context=stack("context"),
        concat=torch.cat([h.context for h in per_head], dim=-1),
    )


def walkthrough(
    sentence: str = "Life is short, eat dessert first.",
    *,
    seed: int = 123,
    d: int = 16,
    d_q: int = 24,
    d_k: int = 24,
    d_v: int = 28,
    tokenizer: str = "notebook",
    max_tokens: int | None = None,
) -> Walkthrough:
    """Seed 002 step by step on ``sentence``; with the defaults it reproduces the notebook's numbers.

    ``tokenizer`` is ``"notebook"`` (drop commas, split on spaces) or ``"spacy"``. ``max_tokens``
    keeps only the first tokens (``dropped`` says how many were cut). Raises ``ValueError`` for
    an empty sentence, sizes outside 1..512 or ``d_q != d_k``.
    """
    kw = dict(seed=seed, d=d, d_q=d_q, d_k=d_k, d_v=d_v, tokenizer=tokenizer, max_tokens=max_tokens)
    return multi_head_walkthrough(sentence, heads=1, **kw).heads[0]


@dataclass(frozen=True, eq=False)
class PlainAttention:
    raw: Tensor  # (..., T, T) x_i · x_j
    weights: Tensor  # (..., T, T) softmax over each row
    output: Tensor  # (..., T, d) y_i = sum_j w_ij x_j


def plain_self_attention(x: Tensor, *, scale: bool = False) -> PlainAttention:
    """Self-attention with no parameters (Bloem's "Transformers from scratch"): every vector is query, key and value.

    ``x`` is ``(T, d)`` or ``(B, T, d)``. With ``scale`` the dot products are divided by sqrt(d);
    without it (as in Bloem's first version) large vectors make each row almost one-hot on the diagonal.
    """
    if x.dim() not in (2, 3):
        raise ValueError(f"x must be (T, d) or (B, T, d); got shape {tuple(x.shape)}")
    raw = x @ x.transpose(-2, -1)
    logits = raw / math.sqrt(x.shape[-1]) if scale else raw
    weights = torch.softmax(logits, dim=-1)
    return PlainAttention(raw=raw, weights=weights, output=weights @ x)
