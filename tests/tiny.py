"""Tiny random-weight checkpoints for all three tasks, for page tests that must not wait for training.

``make_checkpoints(root)`` writes ``root/classifier``, ``root/generator`` and ``root/translator``
with :func:`model.checkpoint.save_checkpoint`, using small vocabularies that hold the words of
the pages' examples and of the tests. Layer and head counts differ between tasks (and between
the translator's encoder and decoder) so that tests catch mixed-up dimensions.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import torch

from model.checkpoint import save_checkpoint
from model.classifier import Classifier, ClassifierConfig
from model.generator import Generator, GeneratorConfig
from model.tokenize import Vocab, char_vocab, tokenize
from model.translator import Translator, TranslatorConfig

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
