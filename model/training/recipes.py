"""Training recipes, one per model: data preparation, batching, loss, validation, probes.

Each recipe is a small object with the same methods, so ``model.training.train`` has one loop; the translator's
is in :mod:`model.training.translation`. An objective
beside the task's own is a loss term composed with the task's recipe (:mod:`model.training.objectives`):
:func:`get` picks the task's recipe and, for ``--objective``, the term.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from model.core.tokenize import Vocab, char_vocab, encode_chars, tokenize
from model.nets.blocks import AttentionMaps
from model.nets.classifier import Classifier, ClassifierConfig, MaskedLM
from model.nets.generator import Generator, GeneratorConfig
from model.training.data import load_shakespeare, load_sst2
from model.training.evaluate import char_loss, classifier_accuracy, eval_attention
from model.training.objectives import (  # noqa: F401 - the terms' names, importable from here as before
    MLM_SHARE,
    MaskedTexts,
    SoftTargets,
    WithTerm,
    distillation_loss,
    label_loss,
    mask_words,
    pad_batch,
)
from model.training.translation import (  # noqa: F401 - the translator's, importable from here as before
    TRANSLATOR_PROBES,
    VAL_SENTENCES,
    TranslatorRecipe,
    TranslatorWithMLMRecipe,
)
from model.zoo import MODELS

CLASSIFIER_PROBES = ["a good film", "not a good film", "the plot is thin but the acting is wonderful"]
GENERATOR_PROBES = [
    "ROMEO:\nWhat light through yonder window breaks?",
    "First Citizen:\nBefore we proceed any further",
    "To be, or not to be: that is the question.\nTo be, or not to be: that is the question.",  # a phrase twice
]


LEXICON_STRENGTH = 1.0  # a rated word becomes an example when its mean rating is at least this far from 0


def lexicon_examples(path: str, vocab: Vocab) -> list[tuple[int, list[str]]]:
    """Rated words as one-word labelled examples: ``(1, [word])`` for a mean rating of at least
    :data:`LEXICON_STRENGTH`, ``(0, [word])`` for one of at most minus that. ``path`` is a word list in
    VADER's format (Hutto & Gilbert 2014: a word, its mean rating from -4 to 4, then other columns, split by
    tabs). Only words the vocabulary holds are kept. SST's own training phrases carry labels down to
    single words; SST-2's sentences alone do not, so such a list puts those word-level labels back."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        word, _, rest = line.partition("\t")
        try:
            mean = float(rest.split("\t", 1)[0])
        except ValueError:
            continue  # a line that is not a rated word
        if word in vocab.stoi and abs(mean) >= LEXICON_STRENGTH:
            out.append((int(mean > 0), [word]))
    if not out:
        raise ValueError(f"{path}: no rated word of this vocabulary (expected 'word<TAB>mean rating' lines)")
    return out


@dataclass
class ClassifierRecipe:
    def prepare(self, cfg) -> dict[str, Any]:
        train = [(y, tokenize(s, "en")) for y, s in load_sst2("train", cfg.data_dir)]
        dev = load_sst2("dev", cfg.data_dir)
        vocab = Vocab.build((t for _, t in train), min_freq=int(cfg.model.get("min_freq", 1)))
        if cfg.lexicon:  # after the vocabulary, which stays the sentences' own
            train += lexicon_examples(cfg.lexicon, vocab)
        return {"train": train, "dev": dev, "vocab": vocab}

    def build(self, b, cfg, net: type | None = None) -> Classifier:
        """The classifier, or ``net`` (one that holds it, e.g. with a masked-LM head) of its config."""
        overrides = {k: v for k, v in cfg.model.items() if k not in ("min_freq", "word_dropout")}
        return (net or Classifier)(ClassifierConfig(vocab_size=len(b["vocab"]), **overrides))

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
        return label_loss(logits, y, cfg.label_smoothing), int((ids != 0).sum())

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
        return {name: eval_attention(model, torch.tensor([p["ids"]])) for name, p in probes.items()}


@dataclass
class MaskedLMRecipe:
    """The classifier's encoder pretrained as a masked language model (:class:`MaskedTexts`), on the
    classifier's data and vocabulary; validation: the masked loss on SST-2 dev. It ships the masked LM whole."""

    task: ClassifierRecipe = field(default_factory=ClassifierRecipe)
    term: MaskedTexts = field(default_factory=MaskedTexts)

    def prepare(self, cfg) -> dict[str, Any]:
        b = self.task.prepare(cfg)
        self.term.prepare(b, cfg)
        return b

    def build(self, b, cfg) -> MaskedLM:
        return self.task.build(b, cfg, net=MaskedLM)

    def steps_per_epoch(self, b, cfg) -> int:
        return self.term.steps_per_epoch(b, cfg)

    def batches(self, b, cfg, gen, steps):
        return self.term.batches(b, cfg, gen)

    def loss(self, model, batch, cfg):
        return self.term.loss(model, batch, cfg)

    def evaluate(self, model, b, cfg) -> dict[str, Any]:
        return self.term.evaluate(model, b, cfg)

    def vocabs(self, b) -> dict[str, Vocab]:
        return self.task.vocabs(b)

    def probes(self, b) -> dict[str, Any]:
        return self.task.probes(b)

    def probe_attention(self, model, probes) -> dict[str, AttentionMaps]:
        return self.task.probe_attention(model, probes)


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
            rows = torch.stack([data[s : s + block + 1] for s in starts.tolist()])
            if cfg.repeat_share:
                picked = torch.rand(cfg.batch_size, generator=gen) < cfg.repeat_share
                for r in picked.nonzero().flatten().tolist():
                    rows[r] = repeated_window(rows[r], len(b["vocab"]), gen)
            yield rows[:, :-1], rows[:, 1:]

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
        return {name: eval_attention(model, torch.tensor([p["ids"]])) for name, p in probes.items()}


REPEAT_LEN = (8, 40)  # a repeated span's length in characters, drawn uniformly
REPEAT_GAP = 24  # at most this many characters of the text between its two copies


def repeated_window(text: Tensor, vocab_size: int, gen: torch.Generator) -> Tensor:
    """``text`` with a span written twice, the data that grows induction heads (Olsson et al. 2022):
    ``prefix + span + gap + span + the text after``, cut to ``text``'s length. The span is, with even
    odds, characters drawn uniformly from the vocabulary (no special token: id 0 is ``<unk>``) or a
    stretch of the text itself; prefix and gap are the window's own text. Nothing else changes: the
    model still predicts every next character."""
    n = int(torch.randint(REPEAT_LEN[0], REPEAT_LEN[1] + 1, (1,), generator=gen))
    gap = int(torch.randint(0, REPEAT_GAP + 1, (1,), generator=gen))
    T = text.numel()
    first = int(torch.randint(0, max(1, T - 2 * n - gap), (1,), generator=gen))
    if torch.rand(1, generator=gen) < 0.5:
        span = torch.randint(1, vocab_size, (n,), generator=gen)
    else:
        span = text[first : first + n].clone()
    rest = text[first + n :]
    out = torch.cat([text[:first], span, rest[:gap], span, rest[gap:]])
    return out[:T]


class ClassifierWithMLMRecipe(WithTerm):
    """The classifier fine-tuned with the masked-LM loss kept beside its own (``--objective task+mlm``)."""

    def __init__(self) -> None:
        super().__init__(ClassifierRecipe(), MaskedTexts())


class DistilledClassifierRecipe(WithTerm):
    """The classifier fine-tuned against a teacher's answers as well as the labels (``--objective
    task+distill``)."""

    def __init__(self, teacher: Any = None) -> None:
        super().__init__(ClassifierRecipe(), SoftTargets(teacher))

    @property
    def teacher(self):
        return self.term.teacher


OBJECTIVES = ("task", "mlm", "task+mlm", "task+distill")  # which task takes which: get()
RECIPES = {"classes": ClassifierRecipe, "next": GeneratorRecipe, "text": TranslatorRecipe}  # by kind of prediction


def get(name: str, objective: str = "task"):
    """The training recipe of our model ``name``: its kind of prediction's (:data:`RECIPES`), or the one an
    ``objective`` adds to it."""
    if name not in MODELS:
        raise ValueError(f"unknown task {name!r}; choose one of {', '.join(MODELS)}")
    extra = {
        ("classifier", "mlm"): MaskedLMRecipe,
        ("classifier", "task+mlm"): ClassifierWithMLMRecipe,
        ("classifier", "task+distill"): DistilledClassifierRecipe,
        ("translator", "task+mlm"): TranslatorWithMLMRecipe,
    }
    if (name, objective) in extra:
        return extra[name, objective]()
    if objective in {o for _, o in extra}:
        tasks = " and ".join(t for t, o in extra if o == objective)
        raise ValueError(f"--objective {objective} is for the {tasks} only")
    if objective != "task":
        raise ValueError(f"unknown objective {objective!r}; choose task, mlm, task+mlm or task+distill")
    return RECIPES[MODELS[name].spec.output]()
