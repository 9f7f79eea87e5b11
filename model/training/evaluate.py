"""Metrics: accuracy, next-character loss and bits per character, corpus BLEU-4 and sacreBLEU."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from model.core.checkpoint import Checkpoint
from model.core.inference import detokenize, model_device, translate_batch
from model.core.tokenize import Vocab, encode_chars, tokenize
from model.training.data import parse_labelled, read_lines


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def corpus_bleu(candidates: Sequence[Sequence[str]], references: Sequence[Sequence[str]], max_n: int = 4) -> float:
    """Corpus BLEU-4 on token lists (one reference each), 0-100, as torchtext's bleu_score.

    Clipped n-gram precisions are pooled over the corpus, combined by a geometric mean with
    uniform weights, and multiplied by the brevity penalty; any zero precision gives 0.
    """
    if len(candidates) != len(references):
        raise ValueError(f"{len(candidates)} candidates but {len(references)} references")
    matches, totals = [0] * max_n, [0] * max_n
    cand_len = ref_len = 0
    for cand, ref in zip(candidates, references):
        cand_len, ref_len = cand_len + len(cand), ref_len + len(ref)
        for n in range(1, max_n + 1):
            c, r = _ngrams(cand, n), _ngrams(ref, n)
            matches[n - 1] += sum(min(k, r[g]) for g, k in c.items())
            totals[n - 1] += max(0, len(cand) - n + 1)
    if min(matches) == 0 or cand_len == 0:
        return 0.0
    log_p = sum(math.log(m / t) for m, t in zip(matches, totals)) / max_n
    bp = 1.0 if cand_len > ref_len else math.exp(1 - ref_len / cand_len)
    return 100.0 * bp * math.exp(log_p)


def bleu_scores(hypotheses: list[list[str]], references: list[str]) -> dict[str, float]:
    """``bleu`` on lower-cased spaCy tokens and ``sacrebleu`` on detokenised lower-cased text."""
    import sacrebleu

    ref_tokens = [tokenize(r, "en") for r in references]
    sacre = sacrebleu.corpus_bleu([detokenize(h) for h in hypotheses], [[r.lower() for r in references]])
    return {"bleu": round(corpus_bleu(hypotheses, ref_tokens), 2), "sacrebleu": round(sacre.score, 2)}


def evaluate_translator(ck: Checkpoint, src_file: str, ref_file: str, *, beam_size: int = 1) -> dict[str, float]:
    src, ref = read_lines(src_file), read_lines(ref_file)
    if len(src) != len(ref):
        raise ValueError(f"{src_file} has {len(src)} lines but {ref_file} has {len(ref)}")
    hyps = translate_batch(ck.model, ck.vocabs, src, beam_size=beam_size)
    return {**bleu_scores(hyps, ref), "sentences": len(src), "beam_size": beam_size}


def classifier_accuracy(model, vocab: Vocab, examples: list[tuple[int, str]], batch_size: int = 256) -> float:
    """Share of ``examples`` (label, sentence) the classifier gets right: the model and its word
    vocabulary, so training calls it on the model it is training."""
    pad, max_len = model.config.pad_id, model.config.max_len
    correct = 0
    for i in range(0, len(examples), batch_size):
        chunk = examples[i : i + batch_size]
        ids = [vocab.encode(tokenize(s, "en")[:max_len]) or [pad] for _, s in chunk]
        width = max(map(len, ids))
        x = torch.tensor([row + [pad] * (width - len(row)) for row in ids], device=next(model.parameters()).device)
        pred = model.predict(x).argmax(-1).tolist()
        correct += sum(int(p == label) for p, (label, _) in zip(pred, chunk))
    return correct / max(1, len(examples))


def evaluate_classifier(ck: Checkpoint, data_file: str) -> dict[str, float]:
    examples = parse_labelled(read_lines(data_file))
    return {
        "accuracy": round(classifier_accuracy(ck.model, ck.vocabs["words"], examples), 4),
        "examples": len(examples),
    }


@torch.no_grad()
def char_loss(model, ids: torch.Tensor, batch_size: int = 64) -> float:
    """Mean next-character loss (nats) over consecutive, non-overlapping context windows."""
    block = model.config.block_size
    n = (ids.numel() - 1) // block
    if n == 0:
        raise ValueError(f"the text needs more than {block + 1} characters")
    x = ids[: n * block].view(n, block)
    y = ids[1 : n * block + 1].view(n, block)
    was_training = model.training
    model.eval()
    total = 0.0
    try:
        for i in range(0, n, batch_size):
            logits, _ = model(x[i : i + batch_size])
            total += F.cross_entropy(
                logits.flatten(0, 1).float(), y[i : i + batch_size].flatten(), reduction="sum"
            ).item()
    finally:
        model.train(was_training)
    return total / (n * block)


def evaluate_generator(ck: Checkpoint, text_file: str, tail: float | None = None) -> dict[str, float]:
    """Next-character loss on ``text_file``; with ``tail`` only on its last fraction of characters
    (0.1 = the validation split of ``model.training.data.load_shakespeare``)."""
    text = "\n".join(read_lines(text_file)) + "\n"
    if tail is not None:
        if not 0 < tail <= 1:
            raise ValueError(f"tail must be a fraction in (0, 1]; got {tail}")
        text = text[int((1 - tail) * len(text)) :]
    ids = torch.tensor(encode_chars(ck.vocabs["chars"], text), device=model_device(ck))
    loss = char_loss(ck.model, ids)
    return {"loss": round(loss, 4), "bpc": round(loss / math.log(2), 4), "characters": len(text)}


def eval_attention(model, *inputs: torch.Tensor):
    """The model's attention maps (its ``AttentionMaps``) on ``inputs`` in eval mode, its mode restored after:
    what a training snapshot records of its probes."""
    dev = next(model.parameters()).device
    was = model.training
    model.eval()
    try:
        with torch.no_grad():
            return model(*(t.to(dev) for t in inputs), return_attention=True)[1]
    finally:
        model.train(was)
