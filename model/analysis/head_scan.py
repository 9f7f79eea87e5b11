"""The head finder's corpus pass: every line of a corpus through one model, a batch of lines at a time, into
the pooled scores of :mod:`model.analysis.heads` (``python -m model heads``, the "Head finder" page).

Lines are read shortest first, in batches of lines of about one length (as many as :data:`CELLS` weights
of maps allow); each batch's maps stay on the model's device, where :class:`~model.analysis.heads.KindTally`
reduces them to per-head sums (:mod:`model.analysis.head_tensors`), and are let go before the next batch:
only one batch's maps exist at a time. With ``processes > 1`` (``torchrun``, :mod:`model.analysis.distributed`)
process ``rank`` reads every ``processes``-th batch of the same plan and the tallies are merged, so each line
is read exactly as one process reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from model.analysis.head_readers import BATCH, MAX_TOKENS, Maps, Reader, our_reader
from model.analysis.heads import METRICS, KindTally
from model.core.specs import ModelSpec

__all__ = ["BATCH", "MAX_TOKENS", "Maps", "Reader", "our_reader"]  # a Hugging Face model's: model.hub.reader
CORPORA = Path(__file__).resolve().parent / "corpora"
# the sample a Hugging Face model reads by default, by its source language (ours name theirs: ModelSpec.corpus)
HUB_CORPUS = {"German": "multi30k_de.txt", "": "english.txt"}
PROBE_LEN = 25  # random tokens per copy of an induction probe (fewer where the model reads less)
PROBES = 4  # probes (seeds) per causal kind
CELLS = {"cpu": 1 << 25, "": 1 << 28}  # map weights a batch may hold, on the CPU and on an accelerator
MAX_BATCH = 64
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


def corpus_name(path: str | Path) -> str:
    """``path`` as stored beside scores: relative to the checkout when inside it (the shipped samples)."""
    path = Path(path).resolve()
    root = CORPORA.parents[2]
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def default_corpus(spec: ModelSpec) -> Path:
    """The sample shipped for ``spec``: ours as its description names it; a Hub model's by its source language."""
    if spec.corpus:
        return CORPORA / spec.corpus
    german = any(k.query_axis.endswith("German (source)") for k in spec.kinds)
    return CORPORA / HUB_CORPUS["German" if german else ""]


@dataclass(frozen=True, eq=False)
class HeadScores:
    """A model's heads scored over a corpus (``processes``: how many processes read it)."""

    source: str
    lines: list[str]
    kinds: dict[str, KindTally]
    max_tokens: int
    notes: list[str] = field(default_factory=list)
    processes: int = 1

    def scores(self) -> dict[str, dict[str, np.ndarray]]:
        return {name: t.scores() for name, t in self.kinds.items()}

    def rows(self, *, examples: bool = False) -> list[dict]:
        """One dict per head: ``kind``, ``layer``, ``head`` and every metric (None where it does not apply);
        with ``examples``, metric -> ``[[line, score], ...]``: the top line, then one per decile."""
        out = []
        for name, t in self.kinds.items():
            scores = t.scores()
            picks = t.examples() if examples else {}
            L, H = t.shape
            for layer in range(L):
                for head in range(H):
                    row = {"kind": name, "layer": layer, "head": head}
                    row.update({m: _num(scores[m][layer, head]) for m in METRICS})
                    if examples:
                        row["examples"] = {
                            m: [
                                [int(i), _num(v)]
                                for i, v, ok in zip(idx[:, layer, head], val[:, layer, head], got[:, layer, head])
                                if ok
                            ]
                            for m, (idx, val, got) in picks.items()
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


def plan(reader: Reader, lines: Sequence[str], cells: int | None = None) -> list[list[int]]:
    """The batches the lines are read in: shortest first (so a batch pads little), each as many lines of
    about one length as ``cells`` weights of maps allow (:data:`CELLS` for the reader's device), at most
    :data:`MAX_BATCH`; :data:`BATCH` lines where the reader does not know its maps' size. The same for
    every process of a distributed pass, so a line is read the same way however many read the corpus."""
    budget = cells or CELLS["cpu" if reader.device.type == "cpu" else ""]
    lengths = [max(1, reader.length(line)) for line in lines]
    batches: list[list[int]] = []
    for i in sorted(range(len(lines)), key=lambda i: lengths[i]):
        size = min(MAX_BATCH, max(1, budget // (reader.cells * lengths[i] ** 2))) if reader.cells else BATCH
        if not batches or len(batches[-1]) >= size:
            batches.append([])
        batches[-1].append(i)
    return batches


def _add(tallies: dict[str, KindTally], reader: Reader, maps: Maps, index: list[int]) -> None:
    for name, layers in maps.kinds.items():
        if name not in tallies:
            k = reader.spec.kind(name)
            tallies[name] = KindTally(name, k.cross, k.causal, (len(layers), layers[0].shape[1]), layers[0].device)
        tallies[name].add_batch(layers, maps.queries[name], maps.keys[name], index)


def _probe(reader: Reader, tallies: dict[str, KindTally], base: dict[str, list[int]], probes: int) -> None:
    """The induction probes of every causal self-attention kind, in one pass per kind (they have one length)."""
    for k in reader.spec.kinds:
        if k.causal and not k.cross and k.name in tallies:
            made = [
                _probe_ids(reader, k.query_input, base[k.query_input], np.random.default_rng(s)) for s in range(probes)
            ]
            made = [(ids, n) for ids, n in made if n]
            if made:
                batch = {name: [base[name]] * len(made) for name in base} | {k.query_input: [ids for ids, _ in made]}
                (ids, n) = made[0]
                tallies[k.name].add_probes(reader.forward(batch)[k.name], len(ids) - 2 * n, n)


def scan(
    reader: Reader,
    lines: Sequence[str],
    *,
    progress: Progress | None = None,
    probes: int = PROBES,
    rank: int = 0,
    processes: int = 1,
    cells: int | None = None,
) -> HeadScores:
    """Score every head of ``reader`` over ``lines``, a batch at a time (only their scores are kept). With
    ``processes > 1`` (a torch.distributed process group is up) this process reads its share of the batches,
    and every process returns the merged scores; the probes are read by the process that reads line 0."""
    if not lines:
        raise CorpusError("the corpus is empty; give at least one line of text")
    report = progress or (lambda fraction, text: None)
    tallies: dict[str, KindTally] = {}
    base: dict[str, list[int]] | None = None
    counts = np.zeros(3, dtype=np.int64)  # lines cut, tokens read, unknown tokens read
    mine = plan(reader, lines, cells)[rank::processes]
    done = 0
    for batch in mine:
        report(done / (len(lines) + 1), f"line {done + 1} of {len(lines)}")
        maps = reader.batch([lines[i] for i in batch])
        _add(tallies, reader, maps, batch)
        counts += [sum(maps.cut), sum(maps.read), sum(maps.unknown)]
        if 0 in batch:  # the probes of a translator read the first line's source
            base = maps.inputs[batch.index(0)]
        done += len(batch)
        del maps
    report(len(lines) / (len(lines) + 1), "induction probes")
    if base is not None:
        _probe(reader, tallies, base, probes)
    if processes > 1:
        from model.analysis.distributed import merge

        counts = merge(tallies, counts, reader.spec, device=reader.device)
    tallies = {k.name: tallies[k.name] for k in reader.spec.kinds if k.name in tallies}
    report(1.0, "done")
    cut, read, unknown = (int(c) for c in counts)
    notes = []
    if cut:
        notes.append(f"{cut} of {len(lines)} lines were longer than the model reads here and were cut")
    if read and unknown / read > 0.5:
        notes.append(
            f"{unknown / read:.0%} of the tokens were unknown to the model: is the corpus in the language it reads "
            f"({reader.spec.input_name})? Its scores describe mostly <unk>"
        )
    return HeadScores(reader.source, list(lines), tallies, reader.max_tokens, notes, processes)
