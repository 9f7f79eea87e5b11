"""Causal character generator (the masked generation transformer of Bloem's "Transformers from scratch"):
next-token logits and seeded sampling."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from model.nets.attention import Probe, causal_mask, probe_at
from model.nets.blocks import AttentionMaps, EncoderBlock, check_probe, embed, layer_head_mask


@dataclass(frozen=True)
class GeneratorConfig:
    vocab_size: int = 65  # characters, including <unk>
    dim: int = 128  # model width
    heads: int = 4  # attention heads per layer
    layers: int = 4  # decoder-only blocks
    ff_dim: int = 512  # hidden width of the feed-forward layer
    block_size: int = 128  # context length in characters
    dropout: float = 0.1
    attn_dropout: float | None = None  # dropout on the attention weights; None: the same as dropout
    wide: bool = False  # wide heads (full width each) instead of narrow slices


class Generator(nn.Module):
    def __init__(self, config: GeneratorConfig) -> None:
        super().__init__()
        c = self.config = config
        self.tok_emb = nn.Embedding(c.vocab_size, c.dim)
        self.pos_emb = nn.Embedding(c.block_size, c.dim)
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            EncoderBlock(c.dim, c.heads, c.ff_dim, c.dropout, wide=c.wide, attn_dropout=c.attn_dropout)
            for _ in range(c.layers)
        )
        self.norm = nn.LayerNorm(c.dim)
        self.lm_head = nn.Linear(c.dim, c.vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight  # tied input and output embeddings
        for emb in (self.tok_emb, self.pos_emb):
            nn.init.normal_(emb.weight, std=c.dim**-0.5)  # unit variance after the sqrt(dim) scaling
        self.register_buffer("mask", causal_mask(c.block_size), persistent=False)

    def forward(
        self,
        ids: Tensor,
        *,
        return_attention: bool = False,
        head_mask: Tensor | None = None,
        probe: Probe | None = None,
    ) -> tuple[Tensor, AttentionMaps | None]:
        """``ids`` ``(B, T)`` with T <= block_size -> logits ``(B, T, vocab)`` and causal maps;
        ``probe`` (model.nets.attention.Probe) is filled with one layer's attention internals."""
        check_probe(probe, {"encoder": len(self.blocks)})
        B, T = ids.shape
        if T > self.config.block_size:
            raise ValueError(f"input has {T} characters; the context holds {self.config.block_size}")
        x = self.drop(embed(self.tok_emb, self.pos_emb, ids))
        mask = self.mask[:T, :T]
        maps = AttentionMaps() if return_attention else None
        for i, block in enumerate(self.blocks):
            x, w = block(
                x,
                mask,
                need_weights=return_attention,
                head_mask=layer_head_mask(head_mask, i),
                probe=probe_at(probe, "encoder", i),
            )
            if maps is not None:
                maps.encoder.append(w)
        return self.lm_head(self.norm(x)), maps

    @torch.no_grad()
    def generate(
        self,
        ids: Tensor,
        max_new_tokens: int,
        *,
        temperature: float = 1.0,
        top_k: int | None = None,
        seed: int | None = None,
        head_mask: Tensor | None = None,
    ) -> Tensor:
        """Append ``max_new_tokens`` sampled ids to ``ids`` ``(B, T)``; temperature 0 is greedy."""
        was_training = self.training
        self.eval()
        gen = torch.Generator(device=ids.device)
        if seed is not None:
            gen.manual_seed(seed)
        else:
            gen.seed()
        try:
            for _ in range(max_new_tokens):
                logits, _ = self(ids[:, -self.config.block_size :], head_mask=head_mask)
                ids = torch.cat([ids, sample_next(logits[:, -1], temperature, top_k, gen)], dim=1)
            return ids
        finally:
            self.train(was_training)


def sampling_probs(logits: Tensor, temperature: float, top_k: int | None) -> Tensor:
    """The distribution ``sample_next`` draws from: ``softmax(logits / temperature)`` over the ``top_k``
    likeliest ids (all when None or 0); temperature 0 puts all the weight on the likeliest id."""
    if temperature <= 0:
        return F.one_hot(logits.argmax(-1), logits.size(-1)).to(logits.dtype)
    logits = logits / temperature
    if top_k is not None and 0 < top_k < logits.size(-1):
        kth = torch.topk(logits, top_k).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def sample_next(logits: Tensor, temperature: float, top_k: int | None, gen: torch.Generator) -> Tensor:
    """One id per row of ``logits`` ``(B, vocab)``: greedy at temperature 0, else top-k sampling."""
    if temperature <= 0:
        return logits.argmax(-1, keepdim=True)
    return torch.multinomial(sampling_probs(logits, temperature, top_k), 1, generator=gen)
