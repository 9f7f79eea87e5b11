"""The head finder's corpus pass: every line of a corpus through one model, one line at a time, into the
pooled scores of :mod:`model.analysis.heads` (``python -m model heads``, the "Head finder" page).

A :class:`Reader` is one model seen the same way whether it is ours or a Hugging Face one: ``read`` runs
a line into a :class:`~model.core.results.RunResult` (the model's own special tokens, cut to
``max_tokens``), ``forward`` maps given token ids (the induction probes), and ``prefix``/``usable`` say
which ids open a sequence and which may be drawn at random. Only one line's maps exist at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from model.analysis.heads import METRICS, KindTally, deciles
from model.core.checkpoint import Checkpoint
from model.core.results import RunResult, attention_kind
from model.core.specs import ModelSpec
from model.core.tokenize import CHAR_SPECIALS, WORD_SPECIALS, tokenize

CORPORA = Path(__file__).resolve().parent / "corpora"
# the sample each model reads by default; a Hugging Face model whose source language is German reads German
DEFAULT_CORPUS = {"classifier": "sst2.txt", "generator": "shakespeare.txt", "translator": "multi30k_de.txt"}
HUB_CORPUS = {"German": "multi30k_de.txt", "": "english.txt"}
LANGS = {"words": "en", "src": "de"}  # the tokeniser language of each of our word vocabularies
MAX_TOKENS = 128
PROBE_LEN = 25  # random tokens per copy of an induction probe (fewer where the model reads less)
PROBES = 4  # probes (seeds) per causal kind
BATCH = 8  # lines a Hugging Face encoder or decoder reads in one pass
MAX_LINES = 5000
MAX_BYTES = 2_000_000
Progress = Callable[[float, str], None]


class CorpusError(ValueError):
    """A corpus that cannot be read: the message says what to fix."""


def read_corpus(path: str | Path, *, max_lines: int = MAX_LINES) -> list[str]:
    """The non-blank lines of a UTF-8 text file; :class:`CorpusError` for a missing, binary or empty file."""
    path = Path(path)
    if not path.is_file():
        raise CorpusError(f"{path} is not a file; give a text file with one sequence a line")
    data = path.read_bytes()[: MAX_BYTES + 1]
    if len(data) > MAX_BYTES:
        raise CorpusError(f"{path} is larger than {MAX_BYTES // 1_000_000} MB; give a sample of a few hundred lines")
    return corpus_lines(data, name=str(path), max_lines=max_lines)


def corpus_lines(data: bytes | str, *, name: str = "the corpus", max_lines: int = MAX_LINES) -> list[str]:
    """The non-blank lines of ``data``; :class:`CorpusError` when it is binary, not UTF-8 or empty."""
    if isinstance(data, bytes):
        if b"\x00" in data:
            at = data.index(b"\x00")
            raise CorpusError(f"{name} holds binary data (a NUL byte at {at}); give a text file")
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise CorpusError(f"{name} is not UTF-8 text (byte {err.start} cannot be read); give a text file") from err
    odd = sum(not (c.isprintable() or c.isspace()) for c in data[:10_000])
    if odd > 0.05 * max(1, len(data[:10_000])):
        raise CorpusError(f"{name} looks like binary data ({odd} control characters); give a text file")
    lines = [line.strip() for line in data.splitlines() if line.strip()]
    if not lines:
        raise CorpusError(f"{name} is empty; give at least one line of text")
    return lines[:max_lines]


@dataclass(frozen=True, eq=False)
class Reader:
    """One model, for the corpus pass."""

    source: str
    spec: ModelSpec
    max_tokens: int
    read: Callable[[Sequence[str]], list[tuple[RunResult, bool]]]  # lines -> each one's run, and whether it was cut
    forward: Callable[[dict[str, list[list[int]]]], dict[str, np.ndarray]]  # a batch of ids -> (B, L, H, Tq, Tk)
    specials: Callable[[str], set[int]]  # an input's special ids (a probe keeps those that open a sequence)
    usable: Callable[[str], np.ndarray]  # the ids a probe may draw for an input
    positions: Callable[[str], int]  # the most positions an input may have


def _stack(layers) -> np.ndarray:
    """Per-layer ``(B, H, T, T)`` maps as one ``(B, L, H, T, T)`` float32 array."""
    return torch.stack(list(layers), dim=1).float().cpu().numpy()


def our_reader(ck: Checkpoint, max_tokens: int = MAX_TOKENS) -> Reader:
    """One of our three checkpoints (small: one line at a time, through the same run as the pages)."""
    from model.analysis.runs import run

    spec, model = ck.spec, ck.model
    vocab_of = {k.query_input: k.query_vocab for k in spec.kinds} | {k.key_input: k.key_vocab for k in spec.kinds}

    def read_one(line: str) -> tuple[RunResult, bool]:
        if spec.characters:
            cut = line[:max_tokens]
        else:
            words = tokenize(line, LANGS.get(vocab_of[spec.inputs[0]], "en"))
            cut = " ".join(words[:max_tokens]) if len(words) > max_tokens else line
        r = run(ck, cut)
        return r, r.truncated or cut != line

    def forward(inputs: dict[str, list[list[int]]]) -> dict[str, np.ndarray]:
        device = next(model.parameters()).device
        with torch.inference_mode():
            _, maps = model(*[torch.tensor(inputs[n], device=device) for n in spec.inputs], return_attention=True)
        return {k.name: _stack(getattr(maps, k.name)) for k in spec.kinds}

    def specials(name: str) -> set[int]:
        v = ck.vocabs[vocab_of[name]]
        return {v.stoi[t] for t in WORD_SPECIALS + CHAR_SPECIALS if t in v}

    def usable(name: str) -> np.ndarray:
        return np.array(sorted(set(range(len(ck.vocabs[vocab_of[name]]))) - specials(name)))

    def positions(name: str) -> int:
        return min(spec.limit(model.config) + spec.limit_offset, max_tokens)

    read = lambda lines: [read_one(line) for line in lines]
    return Reader(spec.name, spec, max_tokens, read, forward, specials, usable, positions)


def hub_reader(hub, max_tokens: int = MAX_TOKENS) -> Reader:
    """A Hugging Face model (:class:`model.hub.load.HubModel`). An encoder or a decoder reads a batch of lines
    in one pass of its base model (no prediction head: the finder needs only the maps), padded on the right
    with an attention mask, each line's map then cut back to its own tokens: padding keys get no weight and
    come after every real position, so the cut map is the line's own (a test checks it against
    :func:`model.hub.run.run`). An encoder-decoder translates each line as the "Any model" page does."""
    from model.hub.run import run

    tok, limit = hub.tokenizer, min(max_tokens, hub.max_tokens)
    specials_set = set(tok.all_special_ids)
    kind = hub.spec.kinds[0]

    def encode(line: str) -> tuple[list[int], bool]:
        ids = list(tok(line, verbose=False)["input_ids"])
        if len(ids) <= limit:
            return ids, False
        # every model keeps the start of a long line, as the page does (model.hub.run), its closing specials kept
        return list(tok(line, truncation=True, max_length=limit)["input_ids"]), True

    def read_batch(lines: Sequence[str]) -> list[tuple[RunResult, bool]]:
        if hub.shape == "encoder-decoder":
            return [(r := run(hub, line, max_tokens=limit).result, r.truncated) for line in lines]
        encoded = [encode(line) for line in lines]
        T = max(len(ids) for ids, _ in encoded)
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        x = torch.tensor([ids + [pad] * (T - len(ids)) for ids, _ in encoded], device=hub.device)
        mask = torch.tensor([[1] * len(ids) + [0] * (T - len(ids)) for ids, _ in encoded], device=hub.device)
        with torch.inference_mode():
            maps = _stack(hub.model.base_model(input_ids=x, attention_mask=mask, output_attentions=True).attentions)
        out = []
        for b, (ids, cut) in enumerate(encoded):
            n, names = len(ids), [str(i) for i in ids]
            w = np.ascontiguousarray(maps[b, :, :, :n, :n])
            k = attention_kind(kind.name, w, names, names, special=[i in specials_set for i in ids])
            counted = [i for i in ids if i not in specials_set - {tok.unk_token_id}]
            unknown = sum(i == tok.unk_token_id for i in counted)
            r = RunResult("hub", {kind.name: k}, "", truncated=cut, read=len(counted), unknown_read=unknown)
            out.append((replace(r, inputs={"ids": ids}), cut))
        return out

    def forward(inputs: dict[str, list[list[int]]]) -> dict[str, np.ndarray]:
        with torch.inference_mode():
            if hub.shape == "encoder-decoder":
                t = {n: torch.tensor(inputs[n], device=hub.device) for n in ("src", "tgt")}
                out = hub.model(input_ids=t["src"], decoder_input_ids=t["tgt"], output_attentions=True)
                return {
                    "encoder": _stack(out.encoder_attentions),
                    "decoder": _stack(out.decoder_attentions),
                    "cross": _stack(out.cross_attentions),
                }
            out = hub.model.base_model(input_ids=torch.tensor(inputs["ids"], device=hub.device), output_attentions=True)
            return {kind.name: _stack(out.attentions)}

    vocab = min(len(tok), int(getattr(hub.model.config, "vocab_size", len(tok)) or len(tok)))
    usable = lambda name: np.setdiff1d(np.arange(vocab), sorted(specials_set))
    return Reader(
        hub.source, hub.spec, limit, read_batch, forward, lambda name: specials_set, usable, lambda name: limit
    )


def corpus_name(path: str | Path) -> str:
    """``path`` as stored beside scores: relative to the checkout when inside it (the shipped samples)."""
    path = Path(path).resolve()
    root = CORPORA.parents[2]
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def default_corpus(spec: ModelSpec) -> Path:
    """The sample shipped for ``spec``: ours by name; a Hub model's by its source language."""
    if spec.name in DEFAULT_CORPUS:
        return CORPORA / DEFAULT_CORPUS[spec.name]
    german = any(k.query_axis.endswith("German (source)") for k in spec.kinds)
    return CORPORA / HUB_CORPUS["German" if german else ""]


@dataclass(frozen=True, eq=False)
class HeadScores:
    """A model's heads scored over a corpus."""

    source: str
    lines: list[str]
    kinds: dict[str, KindTally]
    max_tokens: int
    notes: list[str] = field(default_factory=list)

    def scores(self) -> dict[str, dict[str, np.ndarray]]:
        return {name: t.scores() for name, t in self.kinds.items()}

    def rows(self, *, examples: bool = False) -> list[dict]:
        """One dict per head: ``kind``, ``layer``, ``head`` and every metric (None where it does not apply);
        with ``examples``, metric -> ``[[line, score], ...]``: the top line, then one per decile."""
        out = []
        for name, t in self.kinds.items():
            scores = t.scores()
            L, H = t.shape
            for layer in range(L):
                for head in range(H):
                    row = {"kind": name, "layer": layer, "head": head}
                    row.update({m: _num(scores[m][layer, head]) for m in METRICS})
                    if examples:
                        row["examples"] = {
                            m: [
                                [i, _num(per[i][layer, head])] for i in deciles(np.array([p[layer, head] for p in per]))
                            ]
                            for m, per in t.per_line.items()
                            if row.get(m) is not None
                        }
                    out.append(row)
        return out

    def to_json(self, *, examples: bool = False, corpus: str = "") -> dict:
        report = {"source": self.source, "sequences": len(self.lines), "heads": self.rows(examples=examples)}
        report.update(max_tokens=self.max_tokens, notes=self.notes)
        if corpus:
            report["corpus"] = corpus
        return report


def _num(x) -> float | None:
    x = float(x)
    return round(x, 6) if np.isfinite(x) else None


def _probe_ids(reader: Reader, name: str, base: list[int], rng: np.random.Generator) -> tuple[list[int], int]:
    """``[first] + r + r`` for input ``name``: ``first`` is the special token that opens ``base`` (<sos>,
    BOS, the decoder's start), else one random token, so the copies never start at position 0; ``r`` are
    distinct random ids; and ``n``, the copy length."""
    usable = reader.usable(name)
    prefix = [int(base[0])] if base and base[0] in reader.specials(name) else [int(rng.choice(usable))]
    n = min(PROBE_LEN, (reader.positions(name) - len(prefix)) // 2, len(usable))
    if n < 2:
        return [], 0
    r = [int(i) for i in rng.choice(usable, n, replace=False)]
    return prefix + r + r, n


def scan(reader: Reader, lines: Sequence[str], *, progress: Progress | None = None, probes: int = PROBES) -> HeadScores:
    """Score every head of ``reader`` over ``lines``, a few lines at a time (only their scores are kept)."""
    if not lines:
        raise CorpusError("the corpus is empty; give at least one line of text")
    report = progress or (lambda fraction, text: None)
    tallies: dict[str, KindTally] = {}
    base: dict[str, list[int]] = {}
    cut = read = unknown = 0
    # shortest first, so a batch pads little (a 12 × 12 model spends its time in the forward pass); the
    # per-line scores are put back in corpus order below
    order = sorted(range(len(lines)), key=lambda i: len(lines[i]))
    for start in range(0, len(lines), BATCH):
        report(start / (len(lines) + BATCH), f"line {start + 1} of {len(lines)}")
        chunk = order[start : start + BATCH]
        for i, (r, was_cut) in zip(chunk, reader.read([lines[i] for i in chunk])):
            cut += was_cut
            read, unknown = read + r.read, unknown + r.unknown_read
            base = r.inputs if i == 0 else base  # the probes of a translator read the first line's source
            for name, kind in r.kinds.items():
                if name not in tallies:
                    tallies[name] = KindTally(name, kind.cross, reader.spec.kind(name).causal, kind.weights.shape[:2])
                tallies[name].add_line(kind.weights)
    back = np.argsort(order)
    for t in tallies.values():
        t.reorder(back)
    report(len(lines) / (len(lines) + BATCH), "induction probes")
    for k in reader.spec.kinds:
        if k.causal and not k.cross:
            made = [
                _probe_ids(reader, k.query_input, base[k.query_input], np.random.default_rng(s)) for s in range(probes)
            ]
            made = [(ids, n) for ids, n in made if n]
            if made:  # one pass for every probe: they have the same length
                batch = {name: [base[name]] * len(made) for name in base} | {k.query_input: [ids for ids, _ in made]}
                for w, (ids, n) in zip(reader.forward(batch)[k.name], made):
                    tallies[k.name].add_probe(w, len(ids) - 2 * n, n)
    report(1.0, "done")
    notes = []
    if cut:
        notes.append(f"{cut} of {len(lines)} lines were longer than the model reads here and were cut")
    if read and unknown / read > 0.5:
        notes.append(
            f"{unknown / read:.0%} of the tokens were unknown to the model: is the corpus in the language it reads "
            f"({reader.spec.input_name})? Its scores describe mostly <unk>"
        )
    return HeadScores(reader.source, list(lines), tallies, reader.max_tokens, notes)
