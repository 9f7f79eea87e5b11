"""Sequence classifier (as in Bloem's "Transformers from scratch"): embeddings, encoder blocks, mean pooling, class logits."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from model.nets.attention import Probe, padding_mask, probe_at
from model.nets.blocks import AttentionMaps, EncoderBlock, check_probe, embed, layer_head_mask


@dataclass(frozen=True)
class ClassifierConfig:
    vocab_size: int = 1000  # words, including the special tokens
    num_classes: int = 2  # 0 = negative, 1 = positive for SST-2
    dim: int = 128  # model width
    heads: int = 4  # attention heads per layer
    layers: int = 2  # encoder blocks
    ff_dim: int = 256  # hidden width of the feed-forward layer
    max_len: int = 64  # longest input in tokens; longer inputs are cut
    dropout: float = 0.1
    attn_dropout: float | None = None  # dropout on the attention weights; None: the same as dropout
    wide: bool = False  # wide heads (full width each) instead of narrow slices
    pad_id: int = 0


class Classifier(nn.Module):
    def __init__(self, config: ClassifierConfig) -> None:
        super().__init__()
        c = self.config = config
        self.tok_emb = nn.Embedding(c.vocab_size, c.dim, padding_idx=c.pad_id)
        self.pos_emb = nn.Embedding(c.max_len, c.dim)
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            EncoderBlock(c.dim, c.heads, c.ff_dim, c.dropout, wide=c.wide, attn_dropout=c.attn_dropout)
            for _ in range(c.layers)
        )
        self.norm = nn.LayerNorm(c.dim)
        self.head = nn.Linear(c.dim, c.num_classes)
        for emb in (self.tok_emb, self.pos_emb):
            nn.init.normal_(emb.weight, std=c.dim**-0.5)  # unit variance after the sqrt(dim) scaling

    def forward(
        self,
        ids: Tensor,
        *,
        return_attention: bool = False,
        head_mask: Tensor | None = None,
        probe: Probe | None = None,
    ) -> tuple[Tensor, AttentionMaps | None]:
        """``ids`` ``(B, T)`` padded with ``pad_id`` -> logits ``(B, classes)`` and attention maps;
        ``probe`` (model.nets.attention.Probe) is filled with one layer's attention internals."""
        ids = ids[:, : self.config.max_len]
        x, maps = self.encode(ids, return_attention=return_attention, head_mask=head_mask, probe=probe)
        keep = (ids != self.config.pad_id).unsqueeze(-1).to(x.dtype)
        pooled = (x * keep).sum(1) / keep.sum(1).clamp(min=1.0)
        return self.head(pooled), maps

    def encode(
        self,
        ids: Tensor,
        *,
        return_attention: bool = False,
        head_mask: Tensor | None = None,
        probe: Probe | None = None,
    ) -> tuple[Tensor, AttentionMaps | None]:
        """``ids`` ``(B, T)`` -> the final normalised token states ``(B, T, dim)`` and attention maps."""
        check_probe(probe, {"encoder": len(self.blocks)})
        x = self.drop(embed(self.tok_emb, self.pos_emb, ids))
        mask = padding_mask(ids, self.config.pad_id)
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
        return self.norm(x), maps

    @torch.no_grad()
    def predict(self, ids: Tensor) -> Tensor:
        """Class probabilities ``(B, classes)`` in eval mode; the previous mode is restored."""
        was_training = self.training
        self.eval()
        try:
            return torch.softmax(self(ids)[0], dim=-1)
        finally:
            self.train(was_training)


class MaskedLM(Classifier):
    """The classifier with a masked-language-model head (pretraining only; never shipped): each token's
    final state scored against every word's input embedding (tied, as in BERT) plus a bias."""

    def __init__(self, config: ClassifierConfig) -> None:
        super().__init__(config)
        self.mlm_bias = nn.Parameter(torch.zeros(config.vocab_size))

    def masked_logits(self, ids: Tensor) -> Tensor:
        """``(B, T)`` -> ``(B, T, vocab)`` word logits at every position."""
        x, _ = self.encode(ids[:, : self.config.max_len])
        return x @ self.tok_emb.weight.T + self.mlm_bias
