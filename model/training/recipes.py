"""Training recipes, one per model: data preparation, batching, loss, validation, probes.

Each recipe is a small object with the same methods, so ``model.training.train`` has one loop.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from model.core.inference import translate_batch
from model.core.tokenize import Vocab, char_vocab, encode_chars, tokenize
from model.nets.blocks import AttentionMaps
from model.nets.classifier import Classifier, ClassifierConfig
from model.nets.generator import Generator, GeneratorConfig
from model.nets.translator import Translator, TranslatorConfig
from model.training.data import load_multi30k, load_shakespeare, load_sst2
from model.training.evaluate import bleu_scores, char_loss, classifier_accuracy

CLASSIFIER_PROBES = ["a good film", "not a good film", "the plot is thin but the acting is wonderful"]
GENERATOR_PROBES = ["ROMEO:\nWhat light through yonder window breaks?", "First Citizen:\nBefore we proceed any further"]
VAL_SENTENCES = 500  # translator: validation sentences decoded after every epoch
TRANSLATOR_PROBES = ["ein mann fährt fahrrad .", "zwei hunde spielen im schnee .", "eine frau liest ein buch im park ."]


def pad_batch(rows: list[list[int]], pad: int) -> Tensor:
    width = max(map(len, rows))
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows])


@dataclass
class ClassifierRecipe:
    def prepare(self, cfg) -> dict[str, Any]:
        train = [(y, tokenize(s, "en")) for y, s in load_sst2("train", cfg.data_dir)]
        dev = load_sst2("dev", cfg.data_dir)
        vocab = Vocab.build((t for _, t in train), min_freq=int(cfg.model.get("min_freq", 1)))
        return {"train": train, "dev": dev, "vocab": vocab}

    def build(self, b, cfg) -> Classifier:
        overrides = {k: v for k, v in cfg.model.items() if k not in ("min_freq", "word_dropout")}
        return Classifier(ClassifierConfig(vocab_size=len(b["vocab"]), **overrides))

    def steps_per_epoch(self, b, cfg) -> int:
        return math.ceil(len(b["train"]) / cfg.batch_size)

    def batches(self, b, cfg, gen, steps):
        vocab, p_drop = b["vocab"], float(cfg.model.get("word_dropout", 0.0))
        max_len = ClassifierConfig(
            **{k: v for k, v in cfg.model.items() if k in ClassifierConfig.__dataclass_fields__}
        ).max_len
        order = torch.randperm(len(b["train"]), generator=gen).tolist()
        rng = random.Random(int(torch.randint(0, 2**31, (1,), generator=gen)))
        for idx in (order[i : i + cfg.batch_size] for i in range(0, len(order), cfg.batch_size)):
            rows = []
            for i in idx:
                ids = vocab.encode(b["train"][i][1][:max_len]) or [vocab.unk_id]
                # word dropout: hide some words behind <unk> so no single word decides
                rows.append([vocab.unk_id if rng.random() < p_drop else t for t in ids])
            yield pad_batch(rows, 0), torch.tensor([b["train"][i][0] for i in idx])

    def loss(self, model, batch, cfg):
        ids, y = batch
        logits, _ = model(ids)
        return torch.nn.functional.cross_entropy(logits, y, label_smoothing=cfg.label_smoothing), int((ids != 0).sum())

    def evaluate(self, model, b, cfg) -> dict[str, Any]:
        acc = classifier_accuracy(model, self.vocabs(b)["words"], b["dev"])
        return {"score": acc, "dev_accuracy": round(acc, 4)}

    def vocabs(self, b) -> dict[str, Vocab]:
        return {"words": b["vocab"]}

    def probes(self, b) -> dict[str, Any]:
        vocab = b["vocab"]
        return {
            f"p{i}": {"tokens": tokenize(s, "en"), "ids": vocab.encode(tokenize(s, "en"))}
            for i, s in enumerate(CLASSIFIER_PROBES)
        }

    def probe_attention(self, model, probes) -> dict[str, AttentionMaps]:
        return {name: _eval_attention(model, torch.tensor([p["ids"]])) for name, p in probes.items()}


@dataclass
class GeneratorRecipe:
    def prepare(self, cfg) -> dict[str, Any]:
        train, val = load_shakespeare(cfg.data_dir)
        vocab = char_vocab(train + val)
        block = int(cfg.model.get("block_size", GeneratorConfig.block_size))
        return {
            "train": torch.tensor(encode_chars(vocab, train)),
            "val": torch.tensor(encode_chars(vocab, val)),
            "vocab": vocab,
            "block_size": block,
        }

    def build(self, b, cfg) -> Generator:
        return Generator(GeneratorConfig(vocab_size=len(b["vocab"]), **cfg.model))

    def steps_per_epoch(self, b, cfg) -> int:
        return cfg.eval_every or 500

    def batches(self, b, cfg, gen, steps):
        block = GeneratorConfig(**cfg.model).block_size
        data = b["train"]
        for _ in range(steps):
            starts = torch.randint(0, data.numel() - block - 1, (cfg.batch_size,), generator=gen)
            x = torch.stack([data[s : s + block] for s in starts.tolist()])
            y = torch.stack([data[s + 1 : s + block + 1] for s in starts.tolist()])
            yield x, y

    def loss(self, model, batch, cfg):
        x, y = batch
        logits, _ = model(x)
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten()), x.numel()

    def evaluate(self, model, b, cfg) -> dict[str, Any]:
        loss = char_loss(model, b["val"].to(next(model.parameters()).device))
        return {"score": -loss, "val_loss": round(loss, 4), "val_bpc": round(loss / math.log(2), 4)}

    def vocabs(self, b) -> dict[str, Vocab]:
        return {"chars": b["vocab"]}

    def probes(self, b) -> dict[str, Any]:
        vocab, block = b["vocab"], b["block_size"]  # a probe longer than the context keeps its start
        return {
            f"p{i}": {"tokens": list(s[:block]), "ids": encode_chars(vocab, s[:block])}
            for i, s in enumerate(GENERATOR_PROBES)
        }

    def probe_attention(self, model, probes) -> dict[str, AttentionMaps]:
        return {name: _eval_attention(model, torch.tensor([p["ids"]])) for name, p in probes.items()}


@dataclass
class TranslatorRecipe:
    def prepare(self, cfg) -> dict[str, Any]:
        de, en = load_multi30k("train", cfg.data_dir)
        vde, ven = load_multi30k("val", cfg.data_dir)
        src = [tokenize(s, "de") for s in de]
        tgt = [tokenize(s, "en") for s in en]
        min_freq = int(cfg.model.get("min_freq", 2))
        sv, tv = Vocab.build(src, min_freq=min_freq), Vocab.build(tgt, min_freq=min_freq)
        max_len = TranslatorConfig(**self._model_kw(cfg)).max_len - 2
        pairs = [
            (sv.encode(s[:max_len], add_sos_eos=True), tv.encode(t[:max_len], add_sos_eos=True))
            for s, t in zip(src, tgt)
        ]
        return {"pairs": pairs, "src_vocab": sv, "tgt_vocab": tv, "val_de": vde, "val_en": ven}

    @staticmethod
    def _model_kw(cfg) -> dict[str, Any]:
        return {k: v for k, v in cfg.model.items() if k != "min_freq"}

    def build(self, b, cfg) -> Translator:
        return Translator(
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
        return len(self._buckets(b, cfg, torch.Generator().manual_seed(0)))

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
        sv = b["src_vocab"]
        return {
            f"p{i}": {
                "tokens": ["<sos>", *tokenize(s, "de"), "<eos>"],
                "ids": sv.encode(tokenize(s, "de"), add_sos_eos=True),
            }
            for i, s in enumerate(TRANSLATOR_PROBES)
        }

    def probe_attention(self, model, probes) -> dict[str, AttentionMaps]:
        out = {}
        dev = next(model.parameters()).device
        for name, p in probes.items():
            src = torch.tensor([p["ids"]], device=dev)
            tgt = model.greedy(src)
            out[name] = _eval_attention(model, src, tgt[:, :-1])
        return out


def _eval_attention(model, *inputs: Tensor) -> AttentionMaps:
    dev = next(model.parameters()).device
    was = model.training
    model.eval()
    try:
        with torch.no_grad():
            return model(*(t.to(dev) for t in inputs), return_attention=True)[1]
    finally:
        model.train(was)


RECIPES = {"classifier": ClassifierRecipe, "generator": GeneratorRecipe, "translator": TranslatorRecipe}


def get(name: str):
    if name not in RECIPES:
        raise ValueError(f"unknown task {name!r}; choose one of {', '.join(RECIPES)}")
    return RECIPES[name]()
