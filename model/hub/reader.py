"""A Hugging Face model seen by the head finder's corpus pass (:mod:`model.analysis.head_scan`): the hub's
:class:`~model.analysis.head_readers.Reader`, as :func:`~model.analysis.head_readers.our_reader` is our models'.
It lives with the hub models, which sit on top of the analysis they feed (as :mod:`model.hub.attribute` does)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import torch

from model.analysis.head_readers import MAX_TOKENS, Layers, Maps, Reader, as_float32, runs_maps
from model.core.results import RunResult, attention_kind
from model.hub.run import encode as encode_text
from model.hub.run import run


def hub_reader(hub, max_tokens: int = MAX_TOKENS) -> Reader:
    """A Hugging Face model (:class:`model.hub.load.HubModel`). An encoder or a decoder reads a batch of lines
    in one pass of its base model (no prediction head: the finder needs only the maps), padded on the right
    with an attention mask; padding keys get no weight (set to 0 for a bidirectional encoder) and come after
    every real position, so each line's rows are its own map (a test checks it against
    :func:`model.hub.run.run`). An encoder-decoder translates each line as the "Any model" page does."""
    tok, limit = hub.tokenizer, min(max_tokens, hub.max_tokens)
    specials_set = set(tok.all_special_ids)
    kind = hub.spec.kinds[0]
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0

    @functools.lru_cache(maxsize=1 << 13)  # a pass asks a line's length, then reads it
    def encoded(line: str) -> tuple[tuple[int, ...], bool]:
        # the page's own cutting (model.hub.run.encode): a long line keeps its start and its closing specials
        ids, cut, _ = encode_text(hub, line, limit)
        return tuple(ids), cut

    def encode(line: str) -> tuple[list[int], bool]:
        ids, cut = encoded(line)
        return list(ids), cut

    unk = tok.unk_token_id
    not_read = specials_set - {unk}  # once: a tokenizer's attributes cost a lookup each (28 ms for 10 × 512 ids)

    def counted(ids: list[int]) -> tuple[int, int]:
        """Tokens read (specials but <unk> left out) and how many of them are <unk>."""
        read = [i for i in ids if i not in not_read]
        return len(read), sum(i == unk for i in read)

    def forward_lines(encoded: list[list[int]]) -> Layers:
        T = max(len(ids) for ids in encoded)
        x = torch.tensor([ids + [pad] * (T - len(ids)) for ids in encoded], device=hub.device)
        mask = torch.tensor([[1] * len(ids) + [0] * (T - len(ids)) for ids in encoded], device=hub.device)
        with torch.inference_mode():
            layers = as_float32(
                hub.model.base_model(input_ids=x, attention_mask=mask, output_attentions=True).attentions
            )
        if not kind.causal and min(len(ids) for ids in encoded) < T:  # a causal row never sees a later key
            layers = [w.masked_fill(~mask.bool()[:, None, None, :], 0.0) for w in layers]
        return layers

    def maps(lines: Sequence[str]) -> Maps:
        if hub.shape == "encoder-decoder":
            return runs_maps(read_batch(lines), hub.device)
        encoded = [encode(line) for line in lines]
        n = [len(ids) for ids, _ in encoded]
        reads = [counted(ids) for ids, _ in encoded]
        return Maps(
            {kind.name: forward_lines([ids for ids, _ in encoded])},
            {kind.name: n},
            {kind.name: n},
            [cut for _, cut in encoded],
            [r for r, _ in reads],
            [u for _, u in reads],
            [{"ids": ids} for ids, _ in encoded],
        )

    def read_batch(lines: Sequence[str]) -> list[tuple[RunResult, bool]]:
        if hub.shape == "encoder-decoder":
            return [(r := run(hub, line, max_tokens=limit).result, r.truncated) for line in lines]
        encoded = [encode(line) for line in lines]
        layers = forward_lines([ids for ids, _ in encoded])
        out = []
        for b, (ids, cut) in enumerate(encoded):
            n, names = len(ids), [str(i) for i in ids]
            w = torch.stack([layer[b, :, :n, :n] for layer in layers]).cpu().numpy()
            k = attention_kind(kind.name, w, names, names, special=[i in specials_set for i in ids])
            read, unknown = counted(ids)
            r = RunResult("hub", {kind.name: k}, "", truncated=cut, read=read, unknown_read=unknown)
            out.append((replace(r, inputs={"ids": ids}), cut))
        return out

    def forward(inputs: dict[str, list[list[int]]]) -> dict[str, Layers]:
        with torch.inference_mode():
            if hub.shape == "encoder-decoder":
                t = {n: torch.tensor(inputs[n], device=hub.device) for n in ("src", "tgt")}
                out = hub.model(input_ids=t["src"], decoder_input_ids=t["tgt"], output_attentions=True)
                return {
                    "encoder": as_float32(out.encoder_attentions),
                    "decoder": as_float32(out.decoder_attentions),
                    "cross": as_float32(out.cross_attentions),
                }
            out = hub.model.base_model(input_ids=torch.tensor(inputs["ids"], device=hub.device), output_attentions=True)
            return {kind.name: as_float32(out.attentions)}

    vocab = min(len(tok), int(getattr(hub.model.config, "vocab_size", len(tok)) or len(tok)))
    usable = lambda name: np.setdiff1d(np.arange(vocab), sorted(specials_set))
    config = hub.model.config
    cells = int(getattr(config, "num_hidden_layers", 0) or 0) * int(getattr(config, "num_attention_heads", 0) or 0)
    return Reader(
        hub.source,
        hub.spec,
        limit,
        read_batch,
        forward,
        lambda name: specials_set,
        usable,
        lambda name: limit,
        maps=maps,
        length=lambda line: len(encoded(line)[0]),
        cells=0 if hub.shape == "encoder-decoder" else cells,
        device=hub.device,
    )
