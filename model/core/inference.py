"""Text in, predictions and attention out: the path shared by the app, the CLI and the tests."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from model.core.checkpoint import Checkpoint
from model.core.tokenize import EOS, Vocab, decode_chars, encode_chars, tokenize, wrap
from model.nets.blocks import AttentionMaps
from model.nets.generator import sampling_probs
from model.nets.translator import Translator

SENTIMENT_LABELS = ("negative", "positive")


def class_labels(n: int) -> tuple[str, ...]:
    """Names of ``n`` classes: the sentiment labels for two, else the class numbers."""
    return SENTIMENT_LABELS if n == 2 else tuple(map(str, range(n)))


def model_device(ck: Checkpoint) -> torch.device:
    return next(ck.model.parameters()).device


@dataclass
class Classification:
    tokens: list[str]  # what the model saw (after cutting to max_len)
    probs: list[float]  # per class, in the order of ``labels``
    labels: tuple[str, ...]  # class names
    label: str  # the likeliest class
    unknown: list[str]  # tokens that became <unk>
    truncated: bool  # the input was longer than the model's maximum
    attention: AttentionMaps  # encoder: per layer (1, heads, T, T)
    inputs: dict[str, list[int]] = field(default_factory=dict)  # {"ids": [...]}: what the maps were computed from


def read_input(ck: Checkpoint, text: str) -> tuple[list[str], bool]:
    """What a one-input model reads of ``text``: its words (characters, for a character model) cut to the
    model's limit (the classifier keeps its first ``max_len`` words, the generator its last ``block_size``
    characters), and whether ``text`` was cut. :func:`classify` and :func:`next_char` read this, and so does
    the head finder's batched reader (:func:`model.analysis.head_readers.our_reader`)."""
    limit = ck.spec.limit(ck.model.config)
    if ck.spec.characters:
        return list(text[-limit:]), len(text) > limit
    tokens = tokenize(text, "en")
    return tokens[:limit], len(tokens) > limit


def classify(ck: Checkpoint, text: str, *, head_mask: Tensor | None = None) -> Classification:
    """Sentiment of ``text``; raises ValueError when it has no tokens."""
    vocab, model = ck.vocabs["words"], ck.model
    tokens, truncated = read_input(ck, text)
    if not tokens:
        raise ValueError("the text has no words; type a sentence")
    ids = torch.tensor([vocab.encode(tokens)], device=model_device(ck))
    with torch.no_grad():
        logits, maps = model(ids, return_attention=True, head_mask=head_mask)
    probs = torch.softmax(logits[0].float(), -1).tolist()
    labels = class_labels(len(probs))
    best = labels[max(range(len(probs)), key=probs.__getitem__)]
    return Classification(
        tokens, probs, labels, best, vocab.unknown(tokens), truncated, maps.to("cpu"), {"ids": ids[0].tolist()}
    )


@dataclass
class Generation:
    prompt: str  # the prompt as used (cut to the context length)
    new_text: str  # the generated continuation
    chars: list[str]  # the final context window, one entry per character
    attention: AttentionMaps  # encoder: causal maps of that window, (1, heads, T, T) per layer
    unknown: list[str]  # prompt characters outside the vocabulary (became <unk>)
    truncated: bool  # the prompt was cut to the context length
    inputs: dict[str, list[int]] = field(default_factory=dict)  # {"ids": [...]}: the window the maps are of


def generate(
    ck: Checkpoint,
    prompt: str,
    *,
    length: int = 200,
    temperature: float = 0.8,
    top_k: int | None = None,
    seed: int | None = 0,
    head_mask: Tensor | None = None,
) -> Generation:
    """Continue ``prompt`` by ``length`` characters, then map the attention of the last window."""
    vocab, model = ck.vocabs["chars"], ck.model
    if not prompt:
        raise ValueError("the prompt is empty; type a few characters")
    block = model.config.block_size
    truncated = len(prompt) > block
    prompt = prompt[-block:]
    ids = torch.tensor([encode_chars(vocab, prompt)], device=model_device(ck))
    out = model.generate(ids, length, temperature=temperature, top_k=top_k, seed=seed, head_mask=head_mask)
    window = out[:, -block:]
    with torch.no_grad():
        _, maps = model(window, return_attention=True, head_mask=head_mask)
    new_text = decode_chars(vocab, out[0, ids.size(1) :].tolist())
    chars = [vocab.itos[i] for i in window[0].tolist()]
    unknown = sorted({ch for ch in prompt if ch not in vocab})
    return Generation(prompt, new_text, chars, maps.to("cpu"), unknown, truncated, {"ids": window[0].tolist()})


@dataclass
class NextChar:
    """The generator's next-character distribution after a prompt and its attention over the prompt."""

    chars: list[str]  # the context window as typed (unknown characters were read as <unk>)
    probs: dict[str, float]  # vocabulary entry -> probability of coming next
    attention: AttentionMaps  # encoder: causal maps, (1, heads, T, T) per layer
    unknown: list[str]  # characters outside the vocabulary
    truncated: bool  # the prompt was cut to its last block_size characters


def next_char(ck: Checkpoint, prompt: str, *, head_mask: Tensor | None = None) -> NextChar:
    """What the generator would write after ``prompt`` (its last context window); ValueError when empty."""
    vocab, model = ck.vocabs["chars"], ck.model
    if not prompt:
        raise ValueError("the prompt is empty; type a few characters")
    window, truncated = read_input(ck, prompt)
    ids = torch.tensor([encode_chars(vocab, window)], device=model_device(ck))
    with torch.no_grad():
        logits, maps = model(ids, return_attention=True, head_mask=head_mask)
    probs = torch.softmax(logits[0, -1].float(), -1).tolist()
    unknown = sorted({ch for ch in window if ch not in vocab})
    return NextChar(window, dict(zip(vocab.itos, probs)), maps.to("cpu"), unknown, truncated)


@dataclass
class Translation:
    src_tokens: list[str]  # <sos> german tokens <eos>, as the encoder saw them
    tgt_in: list[str]  # decoder inputs: <sos> y1 ... yn
    tgt_out: list[str]  # what each decoder position produced: y1 ... yn <eos>
    text: str  # the English translation, detokenised
    attention: AttentionMaps  # encoder (1,h,S,S), decoder (1,h,T,T), cross (1,h,T,S) per layer
    unknown: list[str]  # German words outside the vocabulary
    truncated: bool
    reference: str | None = None  # the English reference read teacher-forced, when one was given
    # {"src": [...], "tgt": [...]}: the encoder's ids and the decoder inputs (the ids of tgt_in) the maps are of
    inputs: dict[str, list[int]] = field(default_factory=dict)
    reference_unknown: list[str] = field(default_factory=list)  # reference words outside the English vocabulary


def source_ids(ck: Checkpoint, text: str) -> tuple[list[str], list[int], list[str], bool]:
    """German text -> (tokens as the encoder reads them, ids, unknown words, truncated)."""
    vocab = ck.vocabs["src"]
    words = tokenize(text, "de")
    if not words:
        raise ValueError("the German text has no words; type a sentence")
    room = ck.model.config.max_len - 2
    truncated = len(words) > room
    words = words[:room]
    tokens = wrap(words, sos=ck.model.config.source_sos)
    return tokens, vocab.encode(tokens), vocab.unknown(words), truncated


def detokenize(tokens: list[str]) -> str:
    """Join tokens with spaces, without a space before closing punctuation."""
    text = " ".join(tokens)
    for p in (" .", " ,", " !", " ?", " ;", " :", " 's", " n't", " )"):
        text = text.replace(p, p[1:])
    return text.replace("( ", "(")


def translate(
    ck: Checkpoint,
    text: str,
    *,
    beam_size: int = 1,
    reference: str | None = None,
    head_mask: dict[str, Tensor] | None = None,
) -> Translation:
    """Translate German ``text``; greedy when ``beam_size`` is 1.

    The attention is what each output token attended to at its own decoding step: kept from
    the greedy steps, or, for beam search and for ``reference``, from one teacher-forced pass
    over the output (the decoder is causal, so its row i is the same thing).
    """
    model, tgt_vocab = ck.model, ck.vocabs["tgt"]
    src_tokens, ids, unknown, truncated = source_ids(ck, text)
    src = torch.tensor([ids], device=model_device(ck))
    maps = None  # greedy keeps its own; beam search and a reference need a teacher-forced pass
    ref_unknown: list[str] = []
    if reference is not None:
        ref_words = tokenize(reference, "en")[: model.config.max_len - 2]
        ref_unknown = tgt_vocab.unknown(ref_words)
        out = torch.tensor([tgt_vocab.encode(ref_words, add_sos_eos=True)], device=src.device)
    elif beam_size > 1:
        out = model.beam(src, beam_size=beam_size, max_len=max_output_len(len(ids)), head_mask=head_mask)
    else:
        maps = AttentionMaps()
        out = model.greedy(src, max_len=max_output_len(len(ids)), head_mask=head_mask, maps=maps)
    out_ids = out[0].tolist()
    if tgt_vocab.stoi[EOS] in out_ids:
        out_ids = out_ids[: out_ids.index(tgt_vocab.stoi[EOS]) + 1]
    if maps is None:
        tgt = torch.tensor([out_ids], device=src.device)
        with torch.inference_mode():  # faster than no_grad; the maps are only read
            _, maps = model(src, tgt[:, :-1] if len(out_ids) > 1 else tgt, return_attention=True, head_mask=head_mask)
    tokens = [tgt_vocab.itos[i] for i in out_ids]
    words = tgt_vocab.decode(out_ids)
    tgt_in = tokens[:-1] if len(tokens) > 1 else tokens
    inputs = {"src": ids, "tgt": out_ids[:-1] if len(out_ids) > 1 else out_ids}
    return Translation(
        src_tokens,
        tgt_in,
        tokens[1:] or tokens,
        detokenize(words),
        maps.to("cpu"),
        unknown,
        truncated,
        reference,
        inputs,
        ref_unknown,
    )


def max_output_len(src_len: int) -> int:
    """A generous cap on translation length: captions rarely grow by half, so an untrained or
    confused model stops early instead of decoding all ``max_len`` positions."""
    return 2 * src_len + 10


def translate_batch(
    model: Translator, vocabs: dict[str, Vocab], sentences: list[str], *, beam_size: int = 1, batch_size: int = 64
) -> list[list[str]]:
    """Lower-cased English tokens for each German sentence (empty list for an empty line). Takes the model
    and its vocabularies, not a checkpoint, so training can call it on the model it is training."""
    src_vocab, tgt_vocab = vocabs["src"], vocabs["tgt"]
    pad = model.config.pad_id
    room, sos = model.config.max_len - 2, model.config.source_sos
    encoded = [src_vocab.encode(wrap(tokenize(s, "de")[:room], sos=sos)) for s in sentences]
    dev = next(model.parameters()).device
    results: list[list[str]] = [[] for _ in sentences]
    if beam_size > 1:
        for i, ids in enumerate(encoded):
            out = model.beam(torch.tensor([ids], device=dev), beam_size=beam_size, max_len=max_output_len(len(ids)))
            results[i] = tgt_vocab.decode(out[0].tolist())
        return results
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        width = max(len(encoded[i]) for i in idx)
        src = torch.tensor([encoded[i] + [pad] * (width - len(encoded[i])) for i in idx], device=dev)
        out = model.greedy(src, max_len=max_output_len(width))
        for row, i in enumerate(idx):
            results[i] = tgt_vocab.decode(out[row].tolist())
    return results


def reshaped(probs: dict[str, float], temperature: float, top_k: int | None) -> dict[str, float]:
    """``probs`` (a next-character distribution at temperature 1) as sampling would draw from it at
    ``temperature`` among the ``top_k`` likeliest: the same arithmetic as ``Generator.generate``."""
    logits = torch.tensor(list(probs.values()), dtype=torch.float64).log()
    return dict(zip(probs, sampling_probs(logits, temperature, top_k).tolist()))
