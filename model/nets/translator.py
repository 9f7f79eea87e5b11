"""Encoder-decoder translator for Multi30k, in the style of Ben Trevett's PyTorch seq2seq tutorial:
learned positions, greedy and beam search."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from model.nets.attention import Probe, causal_mask, padding_mask, probe_at
from model.nets.blocks import AttentionMaps, DecoderBlock, EncoderBlock, check_probe, embed, layer_head_mask


@dataclass(frozen=True)
class TranslatorConfig:
    src_vocab_size: int = 1000  # German words, including the special tokens
    tgt_vocab_size: int = 1000  # English words, including the special tokens
    dim: int = 256  # model width
    heads: int = 8  # attention heads per layer
    enc_layers: int = 3
    dec_layers: int = 3
    ff_dim: int = 512  # hidden width of the feed-forward layers
    max_len: int = 100  # longest sentence in tokens, <sos> and <eos> included
    dropout: float = 0.1
    attn_dropout: float | None = None  # dropout on the attention weights; None: the same as dropout
    wide: bool = False  # wide heads (full width each) instead of narrow slices
    norm_first: bool = True  # pre-norm blocks; the seq2seq tutorial is post-norm (False)
    tie_embeddings: bool = True  # share the English input embedding with the output layer
    pad_id: int = 0
    sos_id: int = 2
    eos_id: int = 3
    # the German source opens with <sos> (the seq2seq tutorial's input); False: its words, then <eos>, so
    # every row but the first has a word just before it
    source_sos: bool = True


class Translator(nn.Module):
    def __init__(self, config: TranslatorConfig) -> None:
        super().__init__()
        c = self.config = config
        self.src_emb = nn.Embedding(c.src_vocab_size, c.dim, padding_idx=c.pad_id)
        self.tgt_emb = nn.Embedding(c.tgt_vocab_size, c.dim, padding_idx=c.pad_id)
        self.src_pos = nn.Embedding(c.max_len, c.dim)
        self.tgt_pos = nn.Embedding(c.max_len, c.dim)
        self.drop = nn.Dropout(c.dropout)
        kw = dict(wide=c.wide, norm_first=c.norm_first, attn_dropout=c.attn_dropout)
        self.encoder = nn.ModuleList(
            EncoderBlock(c.dim, c.heads, c.ff_dim, c.dropout, **kw) for _ in range(c.enc_layers)
        )
        self.decoder = nn.ModuleList(
            DecoderBlock(c.dim, c.heads, c.ff_dim, c.dropout, **kw) for _ in range(c.dec_layers)
        )
        self.enc_norm = nn.LayerNorm(c.dim) if c.norm_first else nn.Identity()
        self.dec_norm = nn.LayerNorm(c.dim) if c.norm_first else nn.Identity()
        self.out = nn.Linear(c.dim, c.tgt_vocab_size)
        if c.tie_embeddings:
            self.out.weight = self.tgt_emb.weight
        for emb in (self.src_emb, self.tgt_emb, self.src_pos, self.tgt_pos):
            # unit-variance inputs after the sqrt(dim) scaling; also keeps tied output logits small
            nn.init.normal_(emb.weight, std=c.dim**-0.5)

    def embed(self, ids: Tensor, tok: nn.Embedding, pos: nn.Embedding) -> Tensor:
        return self.drop(embed(tok, pos, ids))

    def encode(
        self,
        src: Tensor,
        *,
        return_attention: bool = False,
        head_mask: Tensor | None = None,
        probe: Probe | None = None,
    ) -> tuple[Tensor, list[Tensor]]:
        """``src`` ``(B, S)`` -> memory ``(B, S, dim)`` and encoder self-attention per layer."""
        x = self.embed(src, self.src_emb, self.src_pos)
        mask = padding_mask(src, self.config.pad_id)
        maps = []
        for i, block in enumerate(self.encoder):
            x, w = block(
                x,
                mask,
                need_weights=return_attention,
                head_mask=layer_head_mask(head_mask, i),
                probe=probe_at(probe, "encoder", i),
            )
            if return_attention:
                maps.append(w)
        return self.enc_norm(x), maps

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        src: Tensor,
        *,
        return_attention: bool = False,
        self_head_mask: Tensor | None = None,
        cross_head_mask: Tensor | None = None,
        last_only: bool = False,
        probe: Probe | None = None,
    ) -> tuple[Tensor, list[Tensor], list[Tensor]]:
        """``tgt`` ``(B, T)`` -> logits ``(B, T, vocab)``, decoder self- and cross-attention per layer.

        ``last_only`` projects only the last position to the vocabulary (decoding needs no more).
        """
        T = tgt.size(1)
        x = self.embed(tgt, self.tgt_emb, self.tgt_pos)
        self_mask = causal_mask(T, device=tgt.device) & padding_mask(tgt, self.config.pad_id)
        cross_mask = padding_mask(src, self.config.pad_id)
        self_maps, cross_maps = [], []
        for i, block in enumerate(self.decoder):
            x, ws, wc = block(
                x,
                memory,
                self_mask,
                cross_mask,
                need_weights=return_attention,
                self_head_mask=layer_head_mask(self_head_mask, i),
                cross_head_mask=layer_head_mask(cross_head_mask, i),
                self_probe=probe_at(probe, "decoder", i),
                cross_probe=probe_at(probe, "cross", i),
            )
            if return_attention:
                self_maps.append(ws)
                cross_maps.append(wc)
        if last_only:
            x = x[:, -1:]
        return self.out(self.dec_norm(x)), self_maps, cross_maps

    def new_cache(self) -> list[dict[str, dict[str, Tensor]]]:
        """An empty key/value cache for :meth:`decode_step`: one per decoder layer."""
        return [{"self": {}, "cross": {}} for _ in self.decoder]

    def decode_step(
        self,
        tgt: Tensor,
        memory: Tensor,
        src: Tensor,
        cache: list,
        *,
        head_mask: dict[str, Tensor] | None = None,
        maps: AttentionMaps | None = None,
        probe: Probe | None = None,
    ) -> Tensor:
        """Next-token logits ``(B, vocab)`` after ``tgt`` ``(B, T)``, computing only the last position:
        ``cache`` (from :meth:`new_cache`, kept across the steps of one decoding) holds the keys and
        values of the earlier positions and of the encoder memory. Equals ``decode(tgt, ...)[0][:, -1]``
        for rows without padding (finished rows of a batch give logits nobody reads).

        With ``maps``, this step's attention row is appended per layer to ``maps.decoder`` ``(B, heads,
        1, T)`` and ``maps.cross`` ``(B, heads, 1, S)``. A decoder or cross ``probe`` is filled with this
        step's query (one position) against every key so far."""
        check_probe(probe, {"decoder": len(self.decoder), "cross": len(self.decoder)})
        hm = head_mask or {}
        x = self.drop(embed(self.tgt_emb, self.tgt_pos, tgt[:, -1:], start=tgt.size(1) - 1))
        cross_mask = padding_mask(src, self.config.pad_id)
        for i, block in enumerate(self.decoder):
            x, ws, wc = block(
                x,
                memory,
                None,
                cross_mask,
                need_weights=maps is not None,
                self_head_mask=layer_head_mask(hm.get("decoder"), i),
                cross_head_mask=layer_head_mask(hm.get("cross"), i),
                cache=cache[i],
                self_probe=probe_at(probe, "decoder", i),
                cross_probe=probe_at(probe, "cross", i),
            )
            if maps is not None:
                maps.decoder.append(ws)
                maps.cross.append(wc)
        return self.out(self.dec_norm(x))[:, -1]

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        *,
        return_attention: bool = False,
        head_mask: dict[str, Tensor] | None = None,
        probe: Probe | None = None,
    ) -> tuple[Tensor, AttentionMaps | None]:
        """Teacher-forced pass. ``head_mask`` maps "encoder"/"decoder"/"cross" to ``(layers, heads)``;
        ``probe`` (model.nets.attention.Probe) is filled with one layer's attention internals."""
        check_probe(probe, {"encoder": len(self.encoder), "decoder": len(self.decoder), "cross": len(self.decoder)})
        hm = head_mask or {}
        src, tgt = src[:, : self.config.max_len], tgt[:, : self.config.max_len]
        memory, enc = self.encode(src, return_attention=return_attention, head_mask=hm.get("encoder"), probe=probe)
        logits, dec, cross = self.decode(
            tgt,
            memory,
            src,
            return_attention=return_attention,
            self_head_mask=hm.get("decoder"),
            cross_head_mask=hm.get("cross"),
            probe=probe,
        )
        return logits, (AttentionMaps(enc, dec, cross) if return_attention else None)

    def _eval_mode(self) -> bool:
        was_training = self.training
        self.eval()
        return was_training

    @torch.inference_mode()
    def greedy(
        self,
        src: Tensor,
        max_len: int | None = None,
        head_mask: dict[str, Tensor] | None = None,
        *,
        maps: AttentionMaps | None = None,
    ) -> Tensor:
        """Greedy decoding of ``src`` ``(B, S)``: ``(B, T)`` ids from ``<sos>``, padded after ``<eos>``.

        With ``maps`` (an empty :class:`AttentionMaps`), every step's attention is kept there, shaped as
        one teacher-forced pass over ``ids[:, :-1]`` would give it (each step computes exactly that
        pass's row for its own position), without running that pass. Rows after a row's ``<eos>`` are
        not meaningful."""
        c, hm = self.config, head_mask or {}
        max_len = min(max_len or c.max_len, c.max_len)
        was_training = self._eval_mode()
        steps = AttentionMaps() if maps is not None else None
        try:
            src = src[:, : c.max_len]
            memory, enc = self.encode(src, return_attention=maps is not None, head_mask=hm.get("encoder"))
            out = torch.full((src.size(0), 1), c.sos_id, dtype=torch.long, device=src.device)
            done = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
            cache = self.new_cache()
            for _ in range(max_len - 1):
                logits = self.decode_step(out, memory, src, cache, head_mask=hm, maps=steps)
                nxt = logits.argmax(-1).masked_fill(done, c.pad_id)
                out = torch.cat([out, nxt[:, None]], dim=1)
                done |= nxt == c.eos_id
                if done.all():
                    break
        finally:
            self.train(was_training)
        if maps is not None:
            maps.encoder.extend(enc)
            self._stack_steps(steps, maps)
        return out

    def _stack_steps(self, steps: AttentionMaps, maps: AttentionMaps) -> None:
        """Per-step rows (layer-major within a step) -> one ``(B, heads, T, keys)`` map per layer."""
        L = len(self.decoder)
        T = len(steps.decoder) // L  # one row per step: the decoder inputs ids[:, :-1]
        for i in range(L):
            rows = steps.decoder[i::L]  # step t: (B, heads, 1, t + 1), zero-padded to T keys (the causal mask)
            maps.decoder.append(torch.cat([F.pad(r, (0, T - r.size(-1))) for r in rows], dim=2))
            maps.cross.append(torch.cat(steps.cross[i::L], dim=2))

    @torch.inference_mode()
    def beam(
        self,
        src: Tensor,
        beam_size: int = 4,
        max_len: int | None = None,
        length_penalty: float = 0.6,
        head_mask: dict[str, Tensor] | None = None,
    ) -> Tensor:
        """Beam search for one sentence ``src`` ``(1, S)``; returns the best ``(1, T)`` ids.

        Hypotheses are ranked by log-probability divided by ``((5 + len) / 6) ** length_penalty``
        (Wu et al., 2016), so longer translations are not unfairly cut short. The open hypotheses are
        decoded as one batch through :meth:`decode_step`'s key/value cache, which follows them (rows
        picked with ``index_select``) as they are re-ranked.
        """
        c, hm = self.config, head_mask or {}
        if src.size(0) != 1:
            raise ValueError("beam search takes one sentence at a time (batch size 1)")
        max_len = min(max_len or c.max_len, c.max_len)
        was_training = self._eval_mode()
        try:
            src = src[:, : c.max_len]
            memory, _ = self.encode(src, head_mask=hm.get("encoder"))
            seqs = torch.full((1, 1), c.sos_id, dtype=torch.long, device=src.device)
            scores = torch.zeros(1, device=src.device)
            finished: list[tuple[float, Tensor]] = []
            cache = self.new_cache()
            for step in range(1, max_len):
                logp = torch.log_softmax(self.decode_step(seqs, memory, src, cache, head_mask=hm).float(), dim=-1)
                cand = (scores[:, None] + logp).view(-1)
                top = cand.topk(min(2 * beam_size, cand.numel()))
                V = logp.size(-1)
                next_seqs, next_scores, parents = [], [], []
                for score, idx in zip(top.values.tolist(), top.indices.tolist()):
                    row, tok = divmod(idx, V)
                    seq = torch.cat([seqs[row], seqs.new_tensor([tok])])
                    if tok == c.eos_id:
                        finished.append((score / ((5 + step) / 6) ** length_penalty, seq))
                    else:
                        next_seqs.append(seq)
                        next_scores.append(score)
                        parents.append(row)
                    if len(next_seqs) == beam_size:
                        break
                best_open = next_scores[0] / ((5 + step) / 6) ** length_penalty if next_scores else -math.inf
                if not next_seqs or (len(finished) >= beam_size and max(f[0] for f in finished) >= best_open):
                    break
                seqs = torch.stack(next_seqs)
                scores = torch.tensor(next_scores, device=src.device)
                follow(cache, torch.tensor(parents, device=src.device))
            if not finished:  # ran out of length: take the best open hypothesis
                finished = [(scores[0].item(), seqs[0])]
            return max(finished, key=lambda f: f[0])[1][None]
        finally:
            self.train(was_training)


def follow(cache: list[dict[str, dict[str, Tensor]]], rows: Tensor) -> None:
    """Re-rank a decoding cache in place: batch row ``b`` takes the keys and values of row ``rows[b]``.

    Self-attention rows are picked with ``index_select``; the cross-attention keys and values are one
    sentence's memory, the same for every hypothesis, so they are only expanded (no copy)."""
    n = rows.numel()
    for layer in cache:
        layer["self"] = {name: t.index_select(0, rows) for name, t in layer["self"].items()}
        layer["cross"] = {name: t[:1].expand(n, *t.shape[1:]) for name, t in layer["cross"].items()}


class TranslatorWithMLM(Translator):
    """The translator with a masked-language-model head on its encoder (training only; never shipped): each
    source token's encoder state scored against every source word's input embedding (tied, as in BERT)
    plus a bias, as :class:`model.nets.classifier.MaskedLM` does for the classifier."""

    def __init__(self, config: TranslatorConfig) -> None:
        super().__init__(config)
        self.src_mlm_bias = nn.Parameter(torch.zeros(config.src_vocab_size))

    def masked_logits(self, src: Tensor) -> Tensor:
        """``(B, S)`` -> ``(B, S, src_vocab)`` source-word logits at every position."""
        x, _ = self.encode(src)
        return x @ self.src_emb.weight.T + self.src_mlm_bias
