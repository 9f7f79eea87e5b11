"""``python -m model heads SOURCE``: score every head of a model over a corpus (the head finder); print JSON."""

from __future__ import annotations

import argparse
import json
import sys


def add(sub, tasks: list[str]) -> None:
    hd = sub.add_parser(
        "heads",
        help="score every head of a model over a corpus (the head finder); print JSON. "
        "Under torchrun --nproc-per-node N the processes split the corpus and process 0 prints",
    )
    hd.add_argument("source", help="classifier, generator, translator, a Hub id or a local folder")
    hd.add_argument("--corpus", default=None, help="a text file, one sequence a line (default: the model's sample)")
    hd.add_argument("--max-tokens", type=int, default=128, help="cut each line to this many tokens (default 128)")
    hd.add_argument("--examples", action="store_true", help="also each head's top line and one line per decile")
    hd.add_argument("--max-params", type=int, default=None, help="Hub models: parameter cap (default 150M)")
    hd.add_argument("--json", action="store_true", help="print JSON (the only output format)")
    hd.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda, mps")
    hd.add_argument(
        "--join-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="under torchrun: how long to wait for the other processes at the rendezvous (default 60)",
    )
    hd.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    """Score every head of a model over a corpus (model.analysis.head_scan); one JSON object. Under torchrun
    each process reads a share of the corpus and rank 0 prints the whole corpus's scores."""
    from tqdm import tqdm

    from model.analysis import distributed
    from model.analysis.head_scan import CorpusError, corpus_name, default_corpus, read_corpus, scan
    from model.core.checkpoint import CheckpointError, default_dir, weights_digest
    from model.core.devices import choose
    from model.core.specs import SPECS
    from model.hub import HubError

    try:
        procs = distributed.from_env()
    except distributed.DistributedError as err:
        sys.exit(f"error: {err}")
    rank, world = (procs.rank, procs.world) if procs else (0, 1)
    bar = tqdm(total=100, file=sys.stderr, bar_format="{percentage:3.0f}% {desc}", disable=rank != 0)

    def progress(fraction: float, text: str) -> None:
        bar.n = round(100 * fraction)
        bar.set_description_str(text)

    try:
        if args.max_tokens < 2:
            raise ValueError("--max-tokens must be at least 2")
        device = choose(args.device, index=procs.local_rank if procs else None)
        if procs:
            distributed.start(procs, device, timeout=args.join_timeout)
        reader = _reader(args, device, progress)
        corpus = args.corpus or str(default_corpus(reader.spec))
        scores = scan(reader, read_corpus(corpus), progress=progress, rank=rank, processes=world)
    except (CorpusError, CheckpointError, HubError, ValueError, distributed.DistributedError) as err:
        bar.close()
        distributed.stop()
        own = rank == 0 or isinstance(err, distributed.DistributedError)  # that message names the process
        sys.exit(f"error: {err}" if own else f"error (process {rank} of {world}): {err}")
    bar.close()
    distributed.stop()
    if rank == 0:
        report = scores.to_json(examples=args.examples, corpus=corpus_name(corpus))
        if args.source in SPECS:  # which weights these scores describe (a test holds each shipped pair together)
            report["weights_sha256"] = weights_digest(default_dir(args.source))
        if procs:
            report["processes"] = world
        print(json.dumps(report, ensure_ascii=False))


def _reader(args: argparse.Namespace, device, progress):
    """The head finder's reader of ``args.source``: one of our checkpoints or a Hugging Face model."""
    from model.core.specs import SPECS

    if args.source in SPECS:
        from model.analysis.head_scan import our_reader
        from model.core.checkpoint import default_dir, load_checkpoint

        return our_reader(load_checkpoint(default_dir(args.source), task=args.source, device=device), args.max_tokens)
    from model.hub.load import load
    from model.hub.reader import hub_reader

    return hub_reader(load(args.source, progress=progress, device=device, limit=args.max_params), args.max_tokens)
