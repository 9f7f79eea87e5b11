"""Training recipes, one per model: data preparation, batching, loss, validation, probes.

Each recipe is a small object with the same methods, so ``model.training.train`` has one loop.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from model.core.inference import translate_batch
from model.core.tokenize import Vocab, char_vocab, encode_chars, tokenize, wrap
from model.nets.blocks import AttentionMaps
from model.nets.classifier import Classifier, ClassifierConfig, MaskedLM
from model.nets.generator import Generator, GeneratorConfig
from model.nets.translator import Translator, TranslatorConfig, TranslatorWithMLM
from model.training.data import load_multi30k, load_shakespeare, load_sst2
from model.training.evaluate import bleu_scores, char_loss, classifier_accuracy

CLASSIFIER_PROBES = ["a good film", "not a good film", "the plot is thin but the acting is wonderful"]
GENERATOR_PROBES = [
    "ROMEO:\nWhat light through yonder window breaks?",
    "First Citizen:\nBefore we proceed any further",
    "To be, or not to be: that is the question.\nTo be, or not to be: that is the question.",  # a phrase twice
]
VAL_SENTENCES = 500  # translator: validation sentences decoded after every epoch
TRANSLATOR_PROBES = ["ein mann fährt fahrrad .", "zwei hunde spielen im schnee .", "eine frau liest ein buch im park ."]


def pad_batch(rows: list[list[int]], pad: int) -> Tensor:
    width = max(map(len, rows))
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows])


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


@dataclass
class MaskedLMRecipe(ClassifierRecipe):
    """The classifier's encoder pretrained as a masked language model (Devlin et al. 2019), on the
    English sentences at hand: SST-2's training sentences and Multi30k's English training side, in
    SST-2's vocabulary (the fine-tuned classifier's). There is no [MASK] word: a hidden word reads
    ``<unk>``, as the classifier's word dropout already does. Validation: the masked loss on SST-2 dev."""

    def prepare(self, cfg) -> dict[str, Any]:
        b = super().prepare(cfg)
        _, en = load_multi30k("train", cfg.data_dir)
        vocab = b["vocab"]
        b["texts"] = [t for _, t in b["train"]] + [tokenize(s, "en") for s in en]
        b["dev_ids"] = [vocab.encode(tokenize(s, "en")) for _, s in b["dev"]]
        return b

    def build(self, b, cfg) -> MaskedLM:
        overrides = {k: v for k, v in cfg.model.items() if k not in ("min_freq", "word_dropout")}
        return MaskedLM(ClassifierConfig(vocab_size=len(b["vocab"]), **overrides))

    def steps_per_epoch(self, b, cfg) -> int:
        return math.ceil(len(b["texts"]) / cfg.batch_size)

    def _masked(self, rows: list[list[int]], vocab_size: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
        return mask_words(pad_batch(rows, 0), vocab_size, gen)

    def _texts_masked(self, b, cfg, picks: list[int], gen: torch.Generator) -> tuple[Tensor, Tensor]:
        """The texts ``picks`` as ids (cut to the model's length), masked by :meth:`_masked`."""
        vocab, max_len = b["vocab"], int(cfg.model.get("max_len", ClassifierConfig.max_len))
        return self._masked([vocab.encode(b["texts"][j][:max_len]) or [vocab.unk_id] for j in picks], len(vocab), gen)

    def batches(self, b, cfg, gen, steps):
        order = torch.randperm(len(b["texts"]), generator=gen).tolist()
        for i in range(0, len(order), cfg.batch_size):
            yield self._texts_masked(b, cfg, order[i : i + cfg.batch_size], gen)

    def loss(self, model, batch, cfg):
        x, target = batch
        logits = model.masked_logits(x)
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target.flatten()), int((x != 0).sum())

    def evaluate(self, model, b, cfg) -> dict[str, Any]:
        gen = torch.Generator().manual_seed(0)  # the same hidden words at every evaluation
        dev = next(model.parameters()).device
        was = model.training
        model.eval()
        total = count = 0.0
        try:
            with torch.no_grad():
                for i in range(0, len(b["dev_ids"]), 256):
                    x, target = self._masked(b["dev_ids"][i : i + 256], len(b["vocab"]), gen)
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
        return {name: _eval_attention(model, torch.tensor([p["ids"]])) for name, p in probes.items()}


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

    net = Translator  # what build makes; a recipe that trains more than it ships names its own

    def build(self, b, cfg) -> Translator:
        return self.net(
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


@dataclass
class ClassifierWithMLMRecipe(MaskedLMRecipe):
    """Fine-tuning with the masked-LM objective kept beside the task, as an auxiliary loss (Chronopoulou et
    al. 2019 keep the language model's loss while fine-tuning on small data): each step adds ``mlm_weight``
    times the masked loss of a batch of the pretraining sentences (drawn at random, masked as in
    :class:`MaskedLMRecipe`) to the classification loss of a batch of SST-2. Validation and the shipped
    checkpoint are the classifier's: accuracy on SST-2 dev, and the weights without the masked-LM bias."""

    def steps_per_epoch(self, b, cfg) -> int:
        return ClassifierRecipe.steps_per_epoch(self, b, cfg)

    def batches(self, b, cfg, gen, steps):
        for ids, y in ClassifierRecipe.batches(self, b, cfg, gen, steps):
            pick = torch.randint(len(b["texts"]), (len(y),), generator=gen).tolist()
            yield (ids, y, *self._texts_masked(b, cfg, pick, gen))

    def loss(self, model, batch, cfg):
        ids, y, x, target = batch
        task, n_task = ClassifierRecipe.loss(self, model, (ids, y), cfg)
        mlm, n_mlm = MaskedLMRecipe.loss(self, model, (x, target), cfg)
        return task + cfg.mlm_weight * mlm, n_task + n_mlm

    def evaluate(self, model, b, cfg) -> dict[str, Any]:
        return ClassifierRecipe.evaluate(self, model, b, cfg)

    def shipped(self, model: MaskedLM) -> Classifier:
        """The classifier inside ``model`` (its weights), without the masked-LM bias."""
        return without_mlm_head(model, Classifier, "mlm_bias")


@dataclass
class TranslatorWithMLMRecipe(TranslatorRecipe):
    """Translation with a masked-LM loss on the encoder kept beside it: each step adds ``mlm_weight`` times
    the masked loss of the batch's own German side (masked by :func:`mask_words`, predicted from the
    encoder's states) to the translation loss, as joint translation and masked-LM training does (Lample &
    Conneau 2019's XLM train both objectives in one model). To fill in a hidden word the encoder has to read
    its neighbours, which is what grows positional heads in the classifier's masked LM. Validation and the
    shipped checkpoint are the translator's: BLEU, and the weights without the masked-LM bias."""

    net = TranslatorWithMLM

    def batches(self, b, cfg, gen, steps):
        for src, tgt in TranslatorRecipe.batches(self, b, cfg, gen, steps):
            yield (src, tgt, *mask_words(src, len(b["src_vocab"]), gen))

    def loss(self, model, batch, cfg):
        src, tgt, x, target = batch
        task, n_task = TranslatorRecipe.loss(self, model, (src, tgt), cfg)
        logits, picked = model.masked_logits(x), target != -100
        # a batch may hide no word (a few short sentences): then the masked loss is 0, not NaN
        mlm = torch.nn.functional.cross_entropy(logits[picked], target[picked]) if picked.any() else logits.sum() * 0
        return task + cfg.mlm_weight * mlm, n_task

    def shipped(self, model: TranslatorWithMLM) -> Translator:
        """The translator inside ``model`` (its weights), without the masked-LM bias."""
        return without_mlm_head(model, Translator, "src_mlm_bias")


def distillation_loss(student: Tensor, teacher: Tensor, temperature: float) -> Tensor:
    """Hinton et al. (2015)'s soft-target loss: KL(softmax(teacher / T) || softmax(student / T)), times
    T² so its gradients keep their size as T changes; the mean over rows."""
    t = temperature
    log_p = torch.log_softmax(teacher / t, dim=-1)
    log_q = torch.log_softmax(student / t, dim=-1)
    return (log_p.exp() * (log_p - log_q)).sum(-1).mean() * t * t


@dataclass
class DistilledClassifierRecipe(ClassifierRecipe):
    """Fine-tuning against a trained classifier's answers as well as the labels (knowledge distillation,
    Hinton et al. 2015). Each step's loss is ``(1 - w)`` times the labelled cross-entropy plus ``w``
    times :func:`distillation_loss` on the SST-2 batch and on as many other English sentences
    (Multi30k's English side, words hidden at the word-dropout rate), which carry no label but the
    teacher's answer: Tang et al. (2019) distil into a small network on such added text. The teacher
    (``cfg.teacher``, a classifier checkpoint with the same vocabulary) only answers; it never learns."""

    teacher: Any = None

    def prepare(self, cfg) -> dict[str, Any]:
        from model.core.checkpoint import load_checkpoint

        if not cfg.teacher:
            raise ValueError("--objective task+distill needs --teacher DIR (a classifier checkpoint)")
        b = super().prepare(cfg)
        ck = load_checkpoint(cfg.teacher, task="classifier")
        if ck.vocabs["words"].itos != b["vocab"].itos:
            raise ValueError(f"{cfg.teacher}: the teacher's vocabulary is not this classifier's")
        self.teacher = ck.model.eval().requires_grad_(False)
        _, en = load_multi30k("train", cfg.data_dir)
        b["texts"] = [tokenize(s, "en") for s in en]
        return b

    def batches(self, b, cfg, gen, steps):
        vocab, p_drop = b["vocab"], float(cfg.model.get("word_dropout", 0.0))
        max_len = int(cfg.model.get("max_len", ClassifierConfig.max_len))
        for ids, y in ClassifierRecipe.batches(self, b, cfg, gen, steps):
            pick = torch.randint(len(b["texts"]), (len(y),), generator=gen).tolist()
            hide = torch.rand(len(y), max_len, generator=gen) < p_drop
            rows = [vocab.encode(b["texts"][j][:max_len]) or [vocab.unk_id] for j in pick]
            rows = [[vocab.unk_id if hide[r, k] else t for k, t in enumerate(row)] for r, row in enumerate(rows)]
            yield ids, y, pad_batch(rows, 0)

    def loss(self, model, batch, cfg):
        ids, y, extra = batch
        width = max(ids.shape[1], extra.shape[1])
        both = torch.cat([torch.nn.functional.pad(t, (0, width - t.shape[1])) for t in (ids, extra)])
        self.teacher.to(ids.device)
        with torch.no_grad():
            taught = self.teacher(both)[0]
        logits, _ = model(both)
        task = torch.nn.functional.cross_entropy(logits[: len(y)], y, label_smoothing=cfg.label_smoothing)
        soft = distillation_loss(logits, taught, cfg.temperature)
        w = cfg.distill_weight
        return (1 - w) * task + w * soft, int((both != 0).sum())


OBJECTIVES = ("task", "mlm", "task+mlm", "task+distill")  # which task takes which: get()
RECIPES = {"classifier": ClassifierRecipe, "generator": GeneratorRecipe, "translator": TranslatorRecipe}


def get(name: str, objective: str = "task"):
    if name not in RECIPES:
        raise ValueError(f"unknown task {name!r}; choose one of {', '.join(RECIPES)}")
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
    return RECIPES[name]()
