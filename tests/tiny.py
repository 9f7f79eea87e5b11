"""Tiny random-weight checkpoints for all three tasks, for page tests that must not wait for training.

``make_checkpoints(root)`` writes ``root/classifier``, ``root/generator`` and ``root/translator``
with :func:`model.core.checkpoint.save_checkpoint`, using small vocabularies that hold the words of
the pages' examples and of the tests. Layer and head counts differ between tasks (and between
the translator's encoder and decoder) so that tests catch mixed-up dimensions.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import torch

from model.core.checkpoint import save_checkpoint
from model.core.tokenize import Vocab, char_vocab, tokenize
from model.nets.classifier import Classifier, ClassifierConfig
from model.nets.generator import Generator, GeneratorConfig
from model.nets.translator import Translator, TranslatorConfig

CLASSIFIER_TEXT = """
the acting is wonderful but the plot is thin
a moving and beautifully made film
the story is boring and far too long
not bad at all
i loved every minute of it
it is not a good movie , and the cast is great .
terrible awful dull fun funny smart
"""
SHAKESPEARE = """ROMEO:
But soft, what light through yonder window breaks?
It is the east, and Juliet is the sun.

JULIET:
O Romeo, Romeo! wherefore art thou Romeo?
Deny thy father and refuse thy name;
abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:!?'-&
"""
GERMAN = """
ein mann fährt fahrrad .
zwei hunde spielen im schnee .
eine frau liest ein buch im park .
ein kleines mädchen lacht .
drei männer stehen vor einem gebäude .
ein junge springt ins wasser .
"""
ENGLISH = """
a man rides a bike .
two dogs play in the snow .
a woman reads a book in the park .
a little girl laughs .
three men stand in front of a building .
a boy jumps into the water .
"""

CLASSIFIER = ClassifierConfig(dim=24, heads=3, layers=2, ff_dim=32, max_len=16, dropout=0.0)
GENERATOR = GeneratorConfig(dim=16, heads=2, layers=3, ff_dim=32, block_size=48, dropout=0.0)
TRANSLATOR = TranslatorConfig(dim=16, heads=4, enc_layers=2, dec_layers=3, ff_dim=32, max_len=12, dropout=0.0)


def word_vocab(text: str, lang: str) -> Vocab:
    return Vocab.build(tokenize(line, lang) for line in text.strip().splitlines())


def make_checkpoints(root: str | Path, *, seed: int = 0) -> Path:
    """Write the three tiny checkpoints under ``root`` (the value for ``ATTENTION_CHECKPOINTS``)."""
    root = Path(root)
    torch.manual_seed(seed)
    words = word_vocab(CLASSIFIER_TEXT, "en")
    classifier = Classifier(replace(CLASSIFIER, vocab_size=len(words)))
    save_checkpoint(root / "classifier", "classifier", classifier, {"words": words})

    chars = char_vocab(SHAKESPEARE)
    generator = Generator(replace(GENERATOR, vocab_size=len(chars)))
    save_checkpoint(root / "generator", "generator", generator, {"chars": chars})

    src, tgt = word_vocab(GERMAN, "de"), word_vocab(ENGLISH, "en")
    translator = Translator(replace(TRANSLATOR, src_vocab_size=len(src), tgt_vocab_size=len(tgt)))
    save_checkpoint(root / "translator", "translator", translator, {"src": src, "tgt": tgt})
    return root


def corrupt(directory: str | Path) -> None:
    """Truncate a checkpoint's weights file to half its size."""
    weights = Path(directory) / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])


HISTORY_EPOCHS = (1, 2, 3)


def make_history(root: str | Path, *, epochs: tuple[int, ...] = HISTORY_EPOCHS, seed: int = 0) -> Path:
    """Write small fake probe histories beside the tiny checkpoints under ``root`` (call
    :func:`make_checkpoints` first): ``history.safetensors``/``history.json`` as training's
    ``snapshot_probe`` writes them, and per-epoch metrics in each ``config.json``.

    The maps are random row-softmaxes that sharpen with the epoch; the translator's output
    length (its decoder and cross-attention query count) changes from epoch to epoch, as
    greedy decoding's does during real training.
    """
    import json

    from safetensors.torch import save_file

    from model.core.checkpoint import CONFIG
    from model.training import recipes

    root = Path(root)
    g = torch.Generator().manual_seed(seed)

    def maps(heads: int, queries: int, keys: int, epoch: int) -> torch.Tensor:
        return torch.softmax(epoch * torch.randn(heads, queries, keys, generator=g), dim=-1).to(torch.float16)

    de = {f"p{i}": ["<sos>", *tokenize(s, "de"), "<eos>"] for i, s in enumerate(recipes.TRANSLATOR_PROBES)}
    specs = {  # task: (probes, [(kind, layers, heads)], metrics per epoch)
        "classifier": (
            {f"p{i}": tokenize(s, "en") for i, s in enumerate(recipes.CLASSIFIER_PROBES)},
            [("encoder", CLASSIFIER.layers, CLASSIFIER.heads)],
            lambda e: {"score": 0.5 + 0.1 * e, "dev_accuracy": 0.5 + 0.1 * e},
        ),
        "generator": (
            {f"p{i}": list(s) for i, s in enumerate(recipes.GENERATOR_PROBES)},
            [("encoder", GENERATOR.layers, GENERATOR.heads)],
            lambda e: {"score": -3.0 / e, "val_loss": 3.0 / e, "val_bpc": 4.3 / e},
        ),
        "translator": (
            de,
            [
                ("encoder", TRANSLATOR.enc_layers, TRANSLATOR.heads),
                ("decoder", TRANSLATOR.dec_layers, TRANSLATOR.heads),
                ("cross", TRANSLATOR.dec_layers, TRANSLATOR.heads),
            ],
            lambda e: {"score": 5.0 * e, "val_bleu": 5.0 * e, "val_sacrebleu": 5.0 * e},
        ),
    }
    for task, (probes, kinds, metrics) in specs.items():
        d = root / task
        tensors = {}
        for epoch in epochs:
            for name, tokens in probes.items():
                n, out = len(tokens), 3 + epoch  # output words: changes with the epoch
                for kind, layers, heads in kinds:
                    q, k = {"encoder": (n, n), "decoder": (out, out), "cross": (out, n)}[kind]
                    for layer in range(layers):
                        tensors[f"{name}/{kind}/{layer}/{epoch}"] = maps(heads, q, k, epoch).contiguous()
        save_file(tensors, str(d / "history.safetensors"))
        (d / "history.json").write_text(json.dumps({"epochs": list(epochs), "probes": probes}), encoding="utf-8")
        meta = json.loads((d / CONFIG).read_text(encoding="utf-8"))
        history = [
            {**metrics(e), "epoch": e, "step": 10 * e, "train_loss": 2.0 / e, "tokens_per_s": 100.0, "seconds": e}
            for e in epochs
        ]
        meta["training"] = {**meta.get("training", {}), "history": history}
        (d / CONFIG).write_text(json.dumps(meta), encoding="utf-8")
    return root
