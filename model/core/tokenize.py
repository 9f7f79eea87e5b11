"""Tokenisers (spaCy blank German/English, characters) and vocabularies that never KeyError."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

PAD, UNK, SOS, EOS = "<pad>", "<unk>", "<sos>", "<eos>"
WORD_SPECIALS = (PAD, UNK, SOS, EOS)  # ids 0, 1, 2, 3
CHAR_SPECIALS = (UNK,)


@lru_cache(maxsize=4)
def _spacy_tokenizer(lang: str):
    import spacy  # imported lazily: it is slow to import and only the word models need it

    return spacy.blank(lang).tokenizer


def tokenize(text: str, lang: str = "en") -> list[str]:
    """Lower-cased spaCy tokens of ``text`` (``lang`` "de" or "en"), whitespace dropped."""
    return [t.text.lower() for t in _spacy_tokenizer(lang)(text) if not t.is_space]


def wrap(words: Sequence[str], *, sos: bool = True) -> list[str]:
    """A sentence as a model reads it: ``<sos>`` (unless ``sos`` is False), its words, ``<eos>``."""
    return [SOS, *words, EOS] if sos else [*words, EOS]


def unwrap(tokens: Sequence[str]) -> list[str]:
    """The words of a sentence :func:`wrap` made (:func:`tokenize` never makes a ``<sos>`` or ``<eos>``)."""
    return [t for t in tokens if t not in (SOS, EOS)]


class Vocab:
    """A token <-> id table. Special tokens come first; unknown tokens map to ``<unk>``."""

    def __init__(self, itos: Sequence[str]) -> None:
        self.itos = list(itos)
        self.stoi = {s: i for i, s in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            raise ValueError("vocabulary has duplicate entries")
        self.unk_id = self.stoi.get(UNK)

    @classmethod
    def build(
        cls,
        sequences: Iterable[Iterable[str]],
        *,
        min_freq: int = 1,
        specials: Sequence[str] = WORD_SPECIALS,
        max_size: int | None = None,
    ) -> Vocab:
        """Tokens seen at least ``min_freq`` times, most frequent first (ties alphabetical)."""
        counts = Counter(tok for seq in sequences for tok in seq)
        kept = sorted(
            (t for t, n in counts.items() if n >= min_freq and t not in specials), key=lambda t: (-counts[t], t)
        )
        if max_size is not None:
            kept = kept[: max(0, max_size - len(specials))]
        return cls([*specials, *kept])

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def id(self, token: str) -> int:
        if token in self.stoi:
            return self.stoi[token]
        if self.unk_id is None:
            raise ValueError(f"{token!r} is not in the vocabulary and it has no {UNK} entry")
        return self.unk_id

    def encode(self, tokens: Iterable[str], *, add_sos_eos: bool = False) -> list[int]:
        ids = [self.id(t) for t in tokens]
        return [self.stoi[SOS], *ids, self.stoi[EOS]] if add_sos_eos else ids

    def decode(self, ids: Iterable[int], *, strip_specials: bool = True) -> list[str]:
        """Tokens for ``ids``; stops at ``<eos>`` and drops pad/sos/eos when ``strip_specials``."""
        out = []
        for i in ids:
            tok = self.itos[int(i)] if 0 <= int(i) < len(self.itos) else UNK
            if strip_specials and tok == EOS:
                break
            if strip_specials and tok in (PAD, SOS):
                continue
            out.append(tok)
        return out

    def unknown(self, tokens: Iterable[str]) -> list[str]:
        """The tokens that would become ``<unk>``."""
        return [t for t in tokens if t not in self.stoi]

    def to_list(self) -> list[str]:
        return list(self.itos)


def char_vocab(text: str) -> Vocab:
    """A character vocabulary: ``<unk>`` then every character of ``text``, sorted."""
    return Vocab([*CHAR_SPECIALS, *sorted(set(text))])


def encode_chars(vocab: Vocab, text: str) -> list[int]:
    return [vocab.id(ch) for ch in text]


def decode_chars(vocab: Vocab, ids: Iterable[int]) -> str:
    return "".join("\ufffd" if (t := vocab.itos[int(i)]) == UNK else t for i in ids)
