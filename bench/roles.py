"""The head finder's scores of one long run, as a model page computes them for its "Head finder roles" caption
(``model.analysis.heads.line_sums``): seconds and peak memory on a GPT-2-shaped run (12 layers × 12 heads,
causal, random peaked heads: fixtures/long_runs.py) held as the page holds it (its causal triangle).

    python -m bench.roles [--tokens 1024] [--whole]

Each measure runs in a process of its own: the growth printed is the resident memory's peak during the
scoring (``VmHWM``, reset just before it) less the resident memory when it started. ``--whole`` also scores
the map whole (``CHUNK`` set past its size), as ``line_sums`` did before it worked a block of heads at a
time: at 1,024 tokens that takes several GB. Prints one JSON object.

    python -m bench.roles --links [--write] [--task generator ...]

The role links of the shipped models (``model.analysis.role_links.choose_links``): for each role a head
plays, the input the rule picks from the head finder's corpus lines (each with its dataset label or
reference translation, where the dataset has one) and the head's score there, recomputed on the run the
page shows. ``--write`` stores them in each checkpoints/<task>/heads.json under ``links`` (the model pages
read them from there). Prints one JSON object: task -> links.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._server import emit, log  # noqa: E402


def measure(tokens: int, whole: bool) -> dict:
    """Score one run in this process: seconds and the peak's growth (MB)."""
    import model.analysis.heads as heads
    from fixtures.long_runs import long_run

    (kind,) = long_run(tokens)
    if whole:
        heads.CHUNK = 1 << 62
    Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) from here on (Linux)
    before, t = status_mb("VmRSS"), time.perf_counter()
    heads.line_sums(kind.weights, cross=False)
    return {
        "held_as": type(kind.weights).__name__,
        "held_mb": round(kind.weights.nbytes / 2**20, 1),
        "seconds": round(time.perf_counter() - t, 2),
        "peak_growth_mb": round(status_mb("VmHWM") - before, 1),
    }


TASKS = ("classifier", "generator", "translator")


def candidates(task: str, lines: list[str]) -> list:
    """The head finder's corpus lines of ``task`` as candidates, each with what its dataset says of it: the
    SST-2 dev label of a classifier line, the Multi30k test reference of a translator line (its corpus is the
    first German captions of that set, in order); the generator's held-out passages have nothing to check."""
    from model.analysis.role_links import Candidate
    from model.core.inference import class_labels
    from model.training.data import load_multi30k, load_sst2

    if task == "classifier":
        labels = {text.strip(): class_labels(2)[label] for label, text in load_sst2("dev")}
        return [Candidate(line.strip(), labels[line.strip()]) for line in lines]
    if task == "translator":
        de, en = load_multi30k("test_2016_flickr")
        assert [d.strip() for d in de[: len(lines)]] == [line.strip() for line in lines], "corpus is not test_2016"
        return [Candidate(line.strip(), ref.strip()) for line, ref in zip(lines, en)]
    return [Candidate(line.strip()) for line in lines]


def role_links(task: str, *, write: bool) -> list[dict]:
    """``task``'s role links, chosen and scored (and stored in its heads.json with ``write``)."""
    from model.analysis.head_scan import CORPORA, read_corpus
    from model.analysis.role_links import choose_links
    from model.core.checkpoint import default_dir, load_checkpoint, weights_digest

    path = default_dir(task) / "heads.json"
    report = json.loads(path.read_text(encoding="utf-8"))
    if report.get("weights_sha256") != weights_digest(default_dir(task)):
        raise SystemExit(f"{path} does not score the weights beside it: recompute it first")
    ck = load_checkpoint(default_dir(task), task=task)
    lines = read_corpus(CORPORA.parents[2] / report["corpus"])
    log(f"{task}: choosing role links among {len(lines)} lines…")
    links = choose_links(ck, report, candidates(task, lines))
    if write:
        report["links"] = links
        path.write_text(json.dumps(report, ensure_ascii=False) + "\n", encoding="utf-8")  # as `model heads` writes it
    return links


def status_mb(field: str) -> float:
    """A memory figure of this process from ``/proc/self/status`` (MB)."""
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--whole", action="store_true", help="also the whole map at once (several GB at 1,024)")
    parser.add_argument("--child", choices=("blocks", "whole"), help=argparse.SUPPRESS)
    parser.add_argument("--links", action="store_true", help="the shipped models' role links and their scores")
    parser.add_argument("--write", action="store_true", help="with --links: store them in each heads.json")
    parser.add_argument("--task", action="append", choices=TASKS, help="with --links: only these models")
    args = parser.parse_args()
    if args.links:
        emit({task: role_links(task, write=args.write) for task in args.task or TASKS})
        return
    if args.child:
        print(json.dumps(measure(args.tokens, args.child == "whole")))
        return
    out = {"shape": f"12 layers × 12 heads, causal, {args.tokens} tokens"}
    for mode in ("blocks", "whole") if args.whole else ("blocks",):
        log(f"scoring ({mode})…")
        child = [sys.executable, "-m", "bench.roles", "--tokens", str(args.tokens), "--child", mode]
        done = subprocess.run(
            child, capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[1]
        )
        out[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    emit(out)


if __name__ == "__main__":
    main()
