"""The translator's training recipe: Multi30k's German-English pairs in batches of about ``batch_size`` target
tokens, validation BLEU, probe translations; and the same with a masked-LM loss on its encoder."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from model.core.inference import translate_batch
from model.core.tokenize import Vocab, tokenize, wrap
from model.nets.blocks import AttentionMaps
from model.nets.translator import Translator, TranslatorConfig
from model.training.data import load_multi30k
from model.training.evaluate import bleu_scores, eval_attention
from model.training.objectives import MaskedSource, WithTerm, pad_batch

VAL_SENTENCES = 500  # translator: validation sentences decoded after every epoch
TRANSLATOR_PROBES = ["ein mann fährt fahrrad .", "zwei hunde spielen im schnee .", "eine frau liest ein buch im park ."]


@dataclass
class TranslatorRecipe:
    def prepare(self, cfg) -> dict[str, Any]:
        de, en = load_multi30k("train", cfg.data_dir)
        vde, ven = load_multi30k("val", cfg.data_dir)
        src = [tokenize(s, "de") for s in de]
        tgt = [tokenize(s, "en") for s in en]
        min_freq = int(cfg.model.get("min_freq", 2))
        sv, tv = Vocab.build(src, min_freq=min_freq), Vocab.build(tgt, min_freq=min_freq)
        c = TranslatorConfig(**self._model_kw(cfg))
        max_len = c.max_len - 2
        pairs = [
            (sv.encode(wrap(s[:max_len], sos=c.source_sos)), tv.encode(t[:max_len], add_sos_eos=True))
            for s, t in zip(src, tgt)
        ]
        return {
            "pairs": pairs,
            "src_vocab": sv,
            "tgt_vocab": tv,
            "val_de": vde,
            "val_en": ven,
            "source_sos": c.source_sos,
        }

    @staticmethod
    def _model_kw(cfg) -> dict[str, Any]:
        return {k: v for k, v in cfg.model.items() if k != "min_freq"}

    def build(self, b, cfg, net: type | None = None) -> Translator:
        """The translator, or ``net`` (one that holds it, e.g. with a masked-LM head) of its config."""
        return (net or Translator)(
            TranslatorConfig(
                src_vocab_size=len(b["src_vocab"]), tgt_vocab_size=len(b["tgt_vocab"]), **self._model_kw(cfg)
            )
        )

    def _buckets(self, b, cfg, gen) -> list[list[int]]:
        """Batches of similar length holding about ``batch_size`` target tokens each."""
        pairs = b["pairs"]
        noise = torch.rand(len(pairs), generator=gen).tolist()
        order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][1]) + noise[i], len(pairs[i][0])))
        batches, cur, width = [], [], 0
        for i in order:
            w = max(width, len(pairs[i][1]))
            if cur and w * (len(cur) + 1) > cfg.batch_size:
                batches.append(cur)
                cur, w = [], len(pairs[i][1])
            cur.append(i)
            width = w
        if cur:
            batches.append(cur)
        perm = torch.randperm(len(batches), generator=gen).tolist()
        return [batches[p] for p in perm]

    def steps_per_epoch(self, b, cfg) -> int:
        """A pass over the pairs; with ``eval_every``, that many batches (at most a pass: the first of each
        epoch's fresh shuffle), so a short fine-tune still keeps a snapshot every few steps."""
        full = len(self._buckets(b, cfg, torch.Generator().manual_seed(0)))
        return min(cfg.eval_every, full) if cfg.eval_every else full

    def batches(self, b, cfg, gen, steps):
        for idx in self._buckets(b, cfg, gen)[:steps]:
            yield pad_batch([b["pairs"][i][0] for i in idx], 0), pad_batch([b["pairs"][i][1] for i in idx], 0)

    def loss(self, model, batch, cfg):
        src, tgt = batch
        logits, _ = model(src, tgt[:, :-1])
        target = tgt[:, 1:]
        loss = torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), target.flatten(), ignore_index=0, label_smoothing=cfg.label_smoothing
        )
        return loss, int((target != 0).sum())

    def evaluate(self, model, b, cfg) -> dict[str, Any]:
        n = VAL_SENTENCES  # a fixed slice keeps the per-epoch check cheap on a CPU
        scores = bleu_scores(translate_batch(model, self.vocabs(b), b["val_de"][:n]), b["val_en"][:n])
        return {"score": scores["bleu"], "val_bleu": scores["bleu"], "val_sacrebleu": scores["sacrebleu"]}

    def vocabs(self, b) -> dict[str, Vocab]:
        return {"src": b["src_vocab"], "tgt": b["tgt_vocab"]}

    def probes(self, b) -> dict[str, Any]:
        sv, sos = b["src_vocab"], b["source_sos"]
        tokens = [wrap(tokenize(s, "de"), sos=sos) for s in TRANSLATOR_PROBES]
        return {f"p{i}": {"tokens": t, "ids": sv.encode(t)} for i, t in enumerate(tokens)}

    def probe_attention(self, model, probes) -> dict[str, AttentionMaps]:
        out = {}
        dev = next(model.parameters()).device
        for name, p in probes.items():
            src = torch.tensor([p["ids"]], device=dev)
            tgt = model.greedy(src)
            out[name] = eval_attention(model, src, tgt[:, :-1])
        return out


class TranslatorWithMLMRecipe(WithTerm):
    """The translator trained with a masked-LM loss on its encoder beside its own (``--objective task+mlm``)."""

    def __init__(self) -> None:
        super().__init__(TranslatorRecipe(), MaskedSource())
