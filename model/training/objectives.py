"""Objectives as loss terms that compose with a task's recipe (:mod:`model.training.recipes`).

A task's recipe holds its data, its batches, its labelled loss (:func:`label_loss` for the classifier), its
validation and its probes. A term adds one more loss beside it: it prepares the data it needs, draws its own
part of each batch (after the task's, from the same generator) and says how its loss joins the task's.
:class:`WithTerm` is a recipe made of the two: a masked-LM loss on the pretraining sentences beside the
classifier's (:class:`MaskedTexts`), on the translator's own source (:class:`MaskedSource`), or a teacher's soft
targets beside the labels (:class:`SoftTargets`). :class:`MaskedTexts` alone is the masked-LM pretraining.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from model.core.tokenize import tokenize
from model.nets.classifier import Classifier, ClassifierConfig, MaskedLM
from model.nets.translator import Translator, TranslatorWithMLM
from model.training.data import load_multi30k


def pad_batch(rows: list[list[int]], pad: int) -> Tensor:
    width = max(map(len, rows))
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows])


def label_loss(logits: Tensor, y: Tensor, smoothing: float) -> Tensor:
    """The classifier's labelled loss: cross-entropy with label smoothing."""
    return torch.nn.functional.cross_entropy(logits, y, label_smoothing=smoothing)


MLM_SHARE = 0.15  # BERT's recipe: 15% of the words are predicted; of those 80% hidden, 10% swapped, 10% kept


def mask_words(ids: Tensor, vocab_size: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
    """BERT's masking of a padded batch ``ids``: :data:`MLM_SHARE` of the words (never a special token,
    ids 0-3) are predicted; of those 80% read ``<unk>`` (id 1), 10% a random word, 10% themselves.
    Returns the input and the target (-100 where nothing is predicted)."""
    words = ids > 3
    pick = words & (torch.rand(ids.shape, generator=gen) < MLM_SHARE)
    target = torch.where(pick, ids, torch.full_like(ids, -100))
    roll = torch.rand(ids.shape, generator=gen)
    x = torch.where(pick & (roll < 0.8), torch.ones_like(ids), ids)
    swap = pick & (roll >= 0.8) & (roll < 0.9)
    return torch.where(swap, torch.randint(4, vocab_size, ids.shape, generator=gen), x), target


def without_mlm_head(model: torch.nn.Module, cls: type, name: str) -> torch.nn.Module:
    """The ``cls`` model inside ``model`` (its weights), without the masked-LM bias ``name``."""
    out = cls(model.config).to(next(model.parameters()).device)
    out.load_state_dict({k: v for k, v in model.state_dict().items() if k != name})
    return out


def distillation_loss(student: Tensor, teacher: Tensor, temperature: float) -> Tensor:
    """Hinton et al. (2015)'s soft-target loss: KL(softmax(teacher / T) || softmax(student / T)), times
    T² so its gradients keep their size as T changes; the mean over rows."""
    t = temperature
    log_p = torch.log_softmax(teacher / t, dim=-1)
    log_q = torch.log_softmax(student / t, dim=-1)
    return (log_p.exp() * (log_p - log_q)).sum(-1).mean() * t * t


@dataclass
class MaskedTexts:
    """The classifier's encoder as a masked language model (Devlin et al. 2019), on the English sentences at
    hand: SST-2's training sentences and Multi30k's English training side, in SST-2's vocabulary (the
    fine-tuned classifier's). There is no [MASK] word: a hidden word reads ``<unk>``, as the classifier's word
    dropout already does. Beside the task, each step adds ``mlm_weight`` times the masked loss of as many
    pretraining sentences as the task's batch has, drawn at random (Chronopoulou et al. 2019 keep the language
    model's loss while fine-tuning on small data); what ships is the classifier, without the masked-LM bias."""

    net: type = MaskedLM
    ships: tuple[type, str] = (Classifier, "mlm_bias")

    def prepare(self, b: dict[str, Any], cfg) -> None:
        _, en = load_multi30k("train", cfg.data_dir)
        vocab = b["vocab"]
        b["texts"] = [t for _, t in b["train"]] + [tokenize(s, "en") for s in en]
        b["dev_ids"] = [vocab.encode(tokenize(s, "en")) for _, s in b["dev"]]

    def masked(self, b, cfg, picks: list[int], gen: torch.Generator) -> tuple[Tensor, Tensor]:
        """The texts ``picks`` as ids (cut to the model's length), masked by :func:`mask_words`."""
        vocab, max_len = b["vocab"], int(cfg.model.get("max_len", ClassifierConfig.max_len))
        rows = [vocab.encode(b["texts"][j][:max_len]) or [vocab.unk_id] for j in picks]
        return mask_words(pad_batch(rows, 0), len(vocab), gen)

    def steps_per_epoch(self, b, cfg) -> int:
        return math.ceil(len(b["texts"]) / cfg.batch_size)

    def batches(self, b, cfg, gen):
        """Every text once, shuffled: the pretraining's own batches."""
        order = torch.randperm(len(b["texts"]), generator=gen).tolist()
        for i in range(0, len(order), cfg.batch_size):
            yield self.masked(b, cfg, order[i : i + cfg.batch_size], gen)

    def draw(self, b, cfg, gen: torch.Generator, batch: tuple[Tensor, ...]) -> tuple[Tensor, Tensor]:
        pick = torch.randint(len(b["texts"]), (len(batch[1]),), generator=gen).tolist()
        return self.masked(b, cfg, pick, gen)

    def loss(self, model, part: tuple[Tensor, Tensor], cfg) -> tuple[Tensor, int]:
        x, target = part
        logits = model.masked_logits(x)
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target.flatten()), int((x != 0).sum())

    def join(self, task_loss: tuple[Tensor, int], term_loss: tuple[Tensor, int], cfg) -> tuple[Tensor, int]:
        return task_loss[0] + cfg.mlm_weight * term_loss[0], task_loss[1] + term_loss[1]

    def evaluate(self, model, b, cfg) -> dict[str, Any]:
        """The masked loss on SST-2 dev, the same words hidden at every evaluation."""
        gen = torch.Generator().manual_seed(0)
        dev = next(model.parameters()).device
        was = model.training
        model.eval()
        total = count = 0.0
        try:
            with torch.no_grad():
                for i in range(0, len(b["dev_ids"]), 256):
                    x, target = mask_words(pad_batch(b["dev_ids"][i : i + 256], 0), len(b["vocab"]), gen)
                    logits = model.masked_logits(x.to(dev))
                    total += torch.nn.functional.cross_entropy(
                        logits.flatten(0, 1), target.to(dev).flatten(), reduction="sum"
                    ).item()
                    count += int((target != -100).sum())
        finally:
            model.train(was)
        loss = total / max(count, 1)
        return {"score": -loss, "mlm_loss": round(loss, 4)}


@dataclass
class MaskedSource:
    """A masked-LM loss on the translator's encoder: each step adds ``mlm_weight`` times the masked loss of the
    batch's own German side (masked by :func:`mask_words`, predicted from the encoder's states) to the
    translation loss, as joint translation and masked-LM training does (Lample & Conneau 2019's XLM train both
    objectives in one model). To fill in a hidden word the encoder has to read its neighbours, which is what
    grows positional heads in the classifier's masked LM. It reads no other text, so it adds no tokens to the
    step's count; what ships is the translator, without the masked-LM bias."""

    net: type = TranslatorWithMLM
    ships: tuple[type, str] = (Translator, "src_mlm_bias")

    def prepare(self, b: dict[str, Any], cfg) -> None:
        pass

    def draw(self, b, cfg, gen: torch.Generator, batch: tuple[Tensor, ...]) -> tuple[Tensor, Tensor]:
        return mask_words(batch[0], len(b["src_vocab"]), gen)

    def loss(self, model, part: tuple[Tensor, Tensor], cfg) -> tuple[Tensor, int]:
        x, target = part
        logits, picked = model.masked_logits(x), target != -100
        # a batch may hide no word (a few short sentences): then the masked loss is 0, not NaN
        mlm = torch.nn.functional.cross_entropy(logits[picked], target[picked]) if picked.any() else logits.sum() * 0
        return mlm, 0

    def join(self, task_loss: tuple[Tensor, int], term_loss: tuple[Tensor, int], cfg) -> tuple[Tensor, int]:
        return task_loss[0] + cfg.mlm_weight * term_loss[0], task_loss[1] + term_loss[1]


@dataclass
class SoftTargets:
    """A trained classifier's answers learned as well as the labels (knowledge distillation, Hinton et al.
    2015), on the labelled batch and on as many other English sentences (Multi30k's English side, words hidden
    at the word-dropout rate), which carry no label but the teacher's answer: Tang et al. (2019) distil into a
    small network on such added text. The step's loss is ``(1 - w)`` times the labelled loss plus ``w`` times
    :func:`distillation_loss` over both, read in one pass of the student. The teacher (``cfg.teacher``, a
    classifier checkpoint with the same vocabulary) only answers; it never learns."""

    teacher: Any = None
    net: type | None = None  # the task's own
    ships: tuple[type, str] | None = None
    shared_pass: bool = field(default=True, init=False)  # the labelled rows go through the student with these

    def prepare(self, b: dict[str, Any], cfg) -> None:
        from model.core.checkpoint import load_checkpoint

        if not cfg.teacher:
            raise ValueError("--objective task+distill needs --teacher DIR (a classifier checkpoint)")
        ck = load_checkpoint(cfg.teacher, task="classifier")
        if ck.vocabs["words"].itos != b["vocab"].itos:
            raise ValueError(f"{cfg.teacher}: the teacher's vocabulary is not this classifier's")
        self.teacher = ck.model.eval().requires_grad_(False)
        _, en = load_multi30k("train", cfg.data_dir)
        b["texts"] = [tokenize(s, "en") for s in en]

    def draw(self, b, cfg, gen: torch.Generator, batch: tuple[Tensor, ...]) -> tuple[Tensor]:
        vocab, p_drop = b["vocab"], float(cfg.model.get("word_dropout", 0.0))
        max_len = int(cfg.model.get("max_len", ClassifierConfig.max_len))
        n = len(batch[1])
        pick = torch.randint(len(b["texts"]), (n,), generator=gen).tolist()
        hide = torch.rand(n, max_len, generator=gen) < p_drop
        rows = [vocab.encode(b["texts"][j][:max_len]) or [vocab.unk_id] for j in pick]
        rows = [[vocab.unk_id if hide[r, k] else t for k, t in enumerate(row)] for r, row in enumerate(rows)]
        return (pad_batch(rows, 0),)

    def shared_loss(self, model, batch: tuple[Tensor, ...], part: tuple[Tensor], cfg) -> tuple[Tensor, int]:
        """Both losses from one pass of the student over the labelled rows and these (padded to one width)."""
        (ids, y), (extra,) = batch, part
        width = max(ids.shape[1], extra.shape[1])
        both = torch.cat([torch.nn.functional.pad(t, (0, width - t.shape[1])) for t in (ids, extra)])
        self.teacher.to(ids.device)
        with torch.no_grad():
            taught = self.teacher(both)[0]
        logits, _ = model(both)
        task = label_loss(logits[: len(y)], y, cfg.label_smoothing)
        soft = distillation_loss(logits, taught, cfg.temperature)
        w = cfg.distill_weight
        return (1 - w) * task + w * soft, int((both != 0).sum())


@dataclass
class WithTerm:
    """A task's recipe with one more loss term beside its own: the task's data (and what the term adds), the
    task's batches (each with the term's part after it), the two losses joined as the term says, the task's
    validation and probes; the term names the network trained (``net``) and what ships of it (``ships``)."""

    task: Any
    term: Any
    arity: int = 2  # tensors in the task's own part of a batch

    def prepare(self, cfg) -> dict[str, Any]:
        b = self.task.prepare(cfg)
        self.term.prepare(b, cfg)
        return b

    def build(self, b, cfg):
        return self.task.build(b, cfg, net=self.term.net)

    def steps_per_epoch(self, b, cfg) -> int:
        return self.task.steps_per_epoch(b, cfg)

    def batches(self, b, cfg, gen, steps):
        for batch in self.task.batches(b, cfg, gen, steps):
            yield (*batch, *self.term.draw(b, cfg, gen, batch))

    def loss(self, model, batch, cfg):
        own, part = tuple(batch[: self.arity]), tuple(batch[self.arity :])
        if getattr(self.term, "shared_pass", False):
            return self.term.shared_loss(model, own, part, cfg)
        return self.term.join(self.task.loss(model, own, cfg), self.term.loss(model, part, cfg), cfg)

    def evaluate(self, model, b, cfg) -> dict[str, Any]:
        return self.task.evaluate(model, b, cfg)

    def vocabs(self, b):
        return self.task.vocabs(b)

    def probes(self, b) -> dict[str, Any]:
        return self.task.probes(b)

    def probe_attention(self, model, probes):
        return self.task.probe_attention(model, probes)

    def shipped(self, model):
        """What ships of the trained network: the task's model without the term's own weights."""
        return without_mlm_head(model, *self.term.ships) if self.term.ships else model
