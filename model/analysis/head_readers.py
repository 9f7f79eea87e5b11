"""One model seen by the head finder's corpus pass (:mod:`model.analysis.head_scan`) the same way whether it
is ours or a Hugging Face one (that one's reader is :func:`model.hub.reader.hub_reader`, above this floor).

A :class:`Reader`'s ``maps`` runs a batch of lines into :class:`Maps`: every kind's per-layer maps as
tensors on the model's device, right-padded, with each line's own lengths (nothing comes to the host);
``read`` runs lines into :class:`~model.core.results.RunResult` s as the pages see them, ``forward`` maps
given token ids (the induction probes), and ``prefix``/``usable`` say which ids open a sequence and which
may be drawn at random; ``length`` orders lines by how long they read and ``cells`` (weights per token²
over every kind's heads) sizes a batch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from model.core.checkpoint import Checkpoint
from model.core.inference import read_input
from model.core.results import RunResult
from model.core.specs import ModelSpec
from model.core.tokenize import CHAR_SPECIALS, WORD_SPECIALS, tokenize

MAX_TOKENS = 128
BATCH = 8  # lines read in one pass when a model's map size is not known
LANGS = {"words": "en", "src": "de"}  # the tokeniser language of each of our word vocabularies
Layers = list[Tensor]  # per layer (B, H, Tq, Tk)


@dataclass(eq=False)
class Maps:
    """A batch of lines on the device: kind -> per-layer ``(B, H, Tq, Tk)`` maps, right-padded (padding keys
    hold no weight), each line's query and key counts per kind, and what each line read."""

    kinds: dict[str, Layers]
    queries: dict[str, list[int]]
    keys: dict[str, list[int]]
    cut: list[bool]
    read: list[int]
    unknown: list[int]
    inputs: list[dict[str, list[int]]]


@dataclass(frozen=True, eq=False)
class Reader:
    """One model, for the corpus pass."""

    source: str
    spec: ModelSpec
    max_tokens: int
    read: Callable[[Sequence[str]], list[tuple[RunResult, bool]]]  # lines -> each one's run, and whether it was cut
    forward: Callable[[dict[str, list[list[int]]]], dict[str, Layers]]  # a batch of ids -> kind -> layers
    specials: Callable[[str], set[int]]  # an input's special ids (a probe keeps those that open a sequence)
    usable: Callable[[str], np.ndarray]  # the ids a probe may draw for an input
    positions: Callable[[str], int]  # the most positions an input may have
    maps: Callable[[Sequence[str]], Maps] | None = None  # lines -> their maps on the device (default: from ``read``)
    length: Callable[[str], int] = len  # how long a line reads (orders the batches)
    cells: int = 0  # weights per token² of one line's maps (every kind's layers × heads); 0: not known
    device: torch.device = torch.device("cpu")

    def batch(self, lines: Sequence[str]) -> Maps:
        return self.maps(lines) if self.maps is not None else runs_maps(self.read(lines), self.device)


def as_float32(layers) -> Layers:
    """Per-layer maps as float32 (a half-precision model's too), without a copy when they already are."""
    return [w if w.dtype in (torch.float32, torch.float64) else w.float() for w in layers]


def runs_maps(runs: Sequence[tuple[RunResult, bool]], device: torch.device) -> Maps:
    """:class:`Maps` of runs already on the host (our models, an encoder-decoder's translations), padded with
    zeros and sent to ``device``."""
    kinds, queries, keys = {}, {}, {}
    for name in runs[0][0].kinds:
        ws = [np.asarray(r.kinds[name].weights, dtype=np.float32) for r, _ in runs]
        Tq, Tk = max(w.shape[-2] for w in ws), max(w.shape[-1] for w in ws)
        pad = np.zeros((len(ws), *ws[0].shape[:2], Tq, Tk), dtype=np.float32)
        for b, w in enumerate(ws):
            pad[b, :, :, : w.shape[-2], : w.shape[-1]] = w
        t = torch.from_numpy(pad).to(device)
        kinds[name] = [t[:, layer] for layer in range(t.shape[1])]
        queries[name], keys[name] = [w.shape[-2] for w in ws], [w.shape[-1] for w in ws]
    return Maps(
        kinds,
        queries,
        keys,
        [cut for _, cut in runs],
        [r.read for r, _ in runs],
        [r.unknown_read for r, _ in runs],
        [r.inputs for r, _ in runs],
    )


def _single_input(ck: Checkpoint) -> bool:
    """Whether ``ck``'s maps are a function of its one input alone, read as one padded batch: one input, no
    special tokens added around it (``limit_offset``), and a causal kind (a padding key after a line's end is
    never seen by its rows) or a ``pad_id`` the model masks itself. The translator reads its own translation."""
    spec, config = ck.spec, ck.model.config
    return (
        len(spec.inputs) == 1
        and not spec.limit_offset
        and all(k.causal or hasattr(config, "pad_id") for k in spec.kinds)
    )


def our_reader(ck: Checkpoint, max_tokens: int = MAX_TOKENS) -> Reader:
    """One of our three checkpoints. The classifier and the generator read a batch of lines in one pass on the
    model's device, each line encoded as :func:`model.analysis.runs.run` reads it (cut to ``max_tokens``,
    then to the model's own limit: the classifier keeps a line's first words, the generator the last window
    of its first ``max_tokens`` characters), right-padded (with ``pad_id`` where the model masks it); each
    line's rows are its own map (a test checks it against ``run``). The translator reads its own
    translation: each line goes through the page's run, its maps then sent to the device."""
    from model.analysis.runs import run

    spec, model = ck.spec, ck.model
    device = next(model.parameters()).device
    vocab_of = {k.query_input: k.query_vocab for k in spec.kinds} | {k.key_input: k.key_vocab for k in spec.kinds}
    first = spec.inputs[0]  # a single-input model's one input
    lang = LANGS.get(vocab_of[first], "en")
    limit = spec.limit(model.config) + spec.limit_offset  # the most positions the model reads

    def cut(line: str) -> str:
        """``line`` cut to ``max_tokens`` characters or words, as the run is given it."""
        if spec.characters:
            return line[:max_tokens]
        words = tokenize(line, lang)
        return " ".join(words[:max_tokens]) if len(words) > max_tokens else line

    def read_one(line: str) -> tuple[RunResult, bool]:
        r = run(ck, short := cut(line))
        return r, r.truncated or short != line

    @functools.lru_cache(maxsize=1 << 13)  # a pass asks a line's length, then reads it (every snapshot too)
    def encoded(line: str) -> tuple[tuple[int, ...], bool, int]:
        """A single-input line's ids as the run reads them (``classify`` keeps the first ``limit`` words,
        ``next_char`` the last ``limit`` characters), whether it was cut, and how many ids are <unk>."""
        text, vocab = cut(line), ck.vocabs[vocab_of[first]]
        kept, truncated = read_input(ck, text)  # the run's own cutting (model.core.inference)
        return tuple(vocab.encode(kept)), truncated or text != line, sum(t not in vocab for t in kept)

    def maps(lines: Sequence[str]) -> Maps:
        coded = [encoded(line) for line in lines]
        if not all(ids for ids, _, _ in coded):  # a line with nothing to read: the run's own error
            return runs_maps(read(lines), device)
        n = [len(ids) for ids, _, _ in coded]
        T, pad = max(n), getattr(model.config, "pad_id", 0)
        x = torch.tensor([list(ids) + [pad] * (T - len(ids)) for ids, _, _ in coded], device=device)
        with torch.inference_mode():
            _, attention = model(x, return_attention=True)
            kinds = {k.name: as_float32(getattr(attention, k.name)) for k in spec.kinds}
            short = [(line, rows) for line, rows in enumerate(n) if rows < T]
            for w in (w for ws in kinds.values() for w in ws):  # padding rows hold no weight, as in runs_maps
                for line, rows in short:  # (padding keys hold none already); only the padding is written
                    w[line, :, rows:] = 0.0
        return Maps(
            kinds,
            dict.fromkeys(kinds, n),
            dict.fromkeys(kinds, n),
            [c for _, c, _ in coded],
            n,
            [u for _, _, u in coded],
            [{first: list(ids)} for ids, _, _ in coded],
        )

    def forward(inputs: dict[str, list[list[int]]]) -> dict[str, Layers]:
        with torch.inference_mode():
            _, maps = model(*[torch.tensor(inputs[n], device=device) for n in spec.inputs], return_attention=True)
        return {k.name: as_float32(getattr(maps, k.name)) for k in spec.kinds}

    def specials(name: str) -> set[int]:
        v = ck.vocabs[vocab_of[name]]
        return {v.stoi[t] for t in WORD_SPECIALS + CHAR_SPECIALS if t in v}

    def usable(name: str) -> np.ndarray:
        return np.array(sorted(set(range(len(ck.vocabs[vocab_of[name]]))) - specials(name)))

    def positions(name: str) -> int:
        return min(limit, max_tokens)

    read = lambda lines: [read_one(line) for line in lines]
    batched = {}
    if _single_input(ck):
        cells = sum(len(getattr(model, k.blocks)) for k in spec.kinds) * model.config.heads
        batched = {"maps": maps, "length": lambda line: len(encoded(line)[0]), "cells": cells}
    return Reader(spec.name, spec, max_tokens, read, forward, specials, usable, positions, device=device, **batched)
