"""Readable tokens and a view without special tokens.

Subword tokenisers write their word boundaries as markers: byte-level BPE (GPT-2, RoBERTa, BART)
starts a word with ``Ġ`` and spells other bytes as odd letters (``Ċ`` is a newline), sentencepiece
(Marian, T5) starts a word with ``▁``, WordPiece (BERT) starts a continuation with ``##``, and
older BPE (CLIP, OpenAI GPT) ends a word with ``</w>``. As bertviz's ``prettify_tokens`` does, the
markers become what they stand for: a token that starts a word starts with a space, a
continuation does not, and invisible characters are written out. Figures add the position
(``"3: the"``), so repeated tokens stay apart on the axes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

import numpy as np

from model.core.results import AttentionKind, RunResult
from model.core.triangle import compact

SCHEMES = ("bytelevel", "metaspace", "wordpiece", "endofword", "plain")
VISIBLE = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
BLANK = "␣"  # a token that is nothing but spaces would vanish on an axis


def _byte_alphabet() -> dict[str, int]:
    """Byte-level BPE's letter -> byte table: printable bytes stand for themselves, the other 68 are
    shifted to 256 + n so that every byte has a visible letter."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    letters = {chr(b): b for b in printable}
    extra = 0
    for b in range(256):
        if b not in printable:
            letters[chr(256 + extra)] = b
            extra += 1
    return letters


BYTES = _byte_alphabet()


def token_scheme(vocab: Sequence[str]) -> str:
    """Which marker convention a vocabulary uses (one of :data:`SCHEMES`), read from its tokens."""
    counts = {"bytelevel": 0, "metaspace": 0, "wordpiece": 0, "endofword": 0}
    for tok in vocab:
        if tok.startswith("Ġ"):
            counts["bytelevel"] += 1
        elif tok.startswith("▁"):
            counts["metaspace"] += 1
        elif tok.startswith("##") and len(tok) > 2:
            counts["wordpiece"] += 1
        elif tok.endswith("</w>"):
            counts["endofword"] += 1
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] else "plain"


def _visible(text: str) -> str:
    for ch, shown in VISIBLE.items():
        text = text.replace(ch, shown)
    return text if text.strip() else BLANK * max(1, len(text))


def prettify_token(token: str, scheme: str) -> str:
    """One token as a reader should see it (see the module docstring)."""
    if scheme == "bytelevel":
        if all(ch in BYTES for ch in token):
            token = bytes(BYTES[ch] for ch in token).decode("utf-8", errors="backslashreplace")
    elif scheme == "metaspace":
        token = token.replace("▁", " ")
    elif scheme == "wordpiece":
        token = token[2:] if token.startswith("##") and len(token) > 2 else " " + token
    elif scheme == "endofword":
        token = token[:-4] + " " if token.endswith("</w>") else token
    if token.startswith(" ") and token.strip():
        return " " + _visible(token.lstrip(" "))  # one space marks the word start, however many there were
    return _visible(token)


def prettify_tokens(tokens: Sequence[str], scheme: str, special: Sequence[bool] | None = None) -> list[str]:
    """:func:`prettify_token` for each token; special tokens (``[CLS]``, ``</s>``) stay as they are."""
    special = special or [False] * len(tokens)
    return [tok if sp else prettify_token(tok, scheme) for tok, sp in zip(tokens, special)]


def _keep(flags: Sequence[bool]) -> list[int]:
    return [i for i, sp in enumerate(flags) if not sp]


def hide_kind(
    kind: AttentionKind, query_special: Sequence[bool] | None = None
) -> tuple[AttentionKind, list[int], list[int]]:
    """``kind`` without its special tokens, each row renormalised over the keys that are left.

    Self-attention drops special rows and columns alike; cross-attention drops the key columns and
    the rows flagged in ``query_special`` (the decoder's flags), all rows when that is ``None``.
    Returns the new kind and the kept query and key positions (to map a clicked cell back to the
    model's own positions). A row whose remaining weight is zero stays zero. Hiding every key raises
    ``ValueError``.
    """
    cols = _keep(kind.special)
    rows_flags = query_special if query_special is not None else (None if kind.cross else kind.special)
    rows = _keep(rows_flags) if rows_flags is not None else list(range(len(kind.queries)))
    if not cols or not rows:
        raise ValueError(f"{kind.name}: every token is a special token; nothing is left to show")
    mask = kind.mask[np.ix_(rows, cols)]
    hidden = replace(
        kind,
        weights=compact(_renormalised(kind, rows, cols), mask, kind.layers),  # a layer at a time, as the run
        queries=[kind.queries[i] for i in rows],
        keys=[kind.keys[j] for j in cols],
        mask=mask,
        special=[False] * len(cols),
    )
    return hidden, rows, cols


def _renormalised(kind: AttentionKind, rows: list[int], cols: list[int]) -> Iterator[np.ndarray]:
    """Each layer's ``(heads, rows, cols)`` weights, every row divided by what is left of it."""
    for layer in range(kind.layers):
        w = kind.weights[layer][:, rows][:, :, cols]
        total = w.sum(-1, keepdims=True)
        yield np.divide(w, total, out=np.zeros_like(w), where=total > 0).astype(np.float32)


def hide_specials(result: RunResult) -> tuple[RunResult, dict[str, tuple[list[int], list[int]]]]:
    """:func:`hide_kind` on every kind of ``result``; cross-attention rows follow the decoder's flags.
    Also returns ``{kind: (kept query positions, kept key positions)}``."""
    kinds, kept = {}, {}
    decoder_flags = result.kinds["decoder"].special if "decoder" in result.kinds else None
    for name, kind in result.kinds.items():
        kinds[name], rows, cols = hide_kind(kind, decoder_flags if kind.cross else None)
        kept[name] = (rows, cols)
    return replace(result, kinds=kinds), kept
