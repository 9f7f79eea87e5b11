"""Command line: ``python -m model train|evaluate|average <task>`` and ``python -m model hub <id-or-folder> "text"``."""

from __future__ import annotations

import argparse
import json
import sys

from model.training.data import data_dir

DEFAULTS = {  # the settings the shipped checkpoints were trained with (docs/RESULTS.md)
    "classifier": dict(
        epochs=20,
        batch_size=32,
        lr=5e-4,
        warmup=200,
        weight_decay=0.1,
        label_smoothing=0.1,
        model=dict(dim=96, heads=4, layers=2, ff_dim=192, dropout=0.3, max_len=64, word_dropout=0.2),
    ),
    "generator": dict(
        epochs=18,
        batch_size=32,
        lr=2e-3,
        warmup=200,
        eval_every=250,
        weight_decay=0.1,
        model=dict(dim=192, heads=6, layers=4, ff_dim=768, block_size=128, dropout=0.05),
    ),
    # translator: shipped from `--epochs 16`, then the same run resumed with `--epochs 24` (the cosine
    # schedule stretched to 24 epochs, so the rate rose again to 3.6e-4); epoch 21 ships
    "translator": dict(
        epochs=16,
        batch_size=2500,
        lr=1e-3,
        warmup=300,
        label_smoothing=0.1,
        average_last=4,
        model=dict(dim=256, heads=8, enc_layers=3, dec_layers=3, ff_dim=512, dropout=0.1),
    ),
}


# TrainConfig fields that `train` takes as --options (None: the task's default)
TRAIN_OPTIONS = (
    ("epochs", int),
    ("batch-size", int),
    ("lr", float),
    ("warmup", int),
    ("eval-every", int),
    ("seed", int),
    ("label-smoothing", float),
    ("weight-decay", float),
    ("average-last", int),
    ("max-minutes", float),
    ("threads", int),
    ("init-from", str),
    ("repeat-share", float),
    ("objective", str),
    ("card", str),
    ("pos-init", str),
    ("layer-decay", float),
    ("mlm-weight", float),
    ("teacher", str),
    ("distill-weight", float),
    ("temperature", float),
    ("lexicon", str),
    ("freeze", str),
)


def _train(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from model.training.train import TrainConfig, train

    d = dict(DEFAULTS[args.task])
    model_kw = dict(d.pop("model"))
    for kv in args.set or []:
        key, _, value = kv.partition("=")
        model_kw[key] = json.loads(value)
    for key in (name.replace("-", "_") for name, _ in TRAIN_OPTIONS):
        if getattr(args, key) is not None:
            d[key] = getattr(args, key)
    cfg = TrainConfig(
        task=args.task,
        data_dir=args.data_dir,
        out_dir=args.out,
        work_dir=args.work,
        device=args.device,
        keep_snapshots=args.keep_snapshots,
        model=model_kw,
        **d,
    )
    bar = None

    def progress(info: dict) -> None:
        nonlocal bar
        event = info["event"]
        if event == "start":
            print(
                f"{cfg.task}: {info['params']:,} parameters on {info['device']}, {info['total_steps']} steps",
                flush=True,
            )
            bar = tqdm(total=info["total_steps"], unit="step", dynamic_ncols=True, mininterval=2.0)
        elif event == "step" and bar is not None:
            bar.n = info["step"]
            bar.set_postfix(
                loss=f"{info['loss']:.3f}", tok_s=f"{info['tokens_per_s']:.0f}", lr=f"{info['lr']:.1e}", refresh=False
            )
            bar.update(0)
        else:
            (bar.write if bar else print)(json.dumps(info))

    best = train(cfg, progress)
    if bar:
        bar.close()
    print(json.dumps({"best": best}))


def _evaluate(args: argparse.Namespace) -> None:
    from model.core.checkpoint import default_dir, load_checkpoint
    from model.training import evaluate
    from model.training.train import pick_device

    ck = load_checkpoint(args.checkpoint or default_dir(args.task), task=args.task, device=pick_device(args.device))
    output = ck.spec.output  # what the model predicts decides what it is scored on
    if output == "text":
        if not (args.src and args.ref):
            sys.exit("evaluate translator needs --src FILE and --ref FILE")
        result = evaluate.evaluate_translator(ck, args.src, args.ref, beam_size=args.beam)
    elif output == "classes":
        if not args.data:
            sys.exit("evaluate classifier needs --data FILE (lines of 'label sentence')")
        result = evaluate.evaluate_classifier(ck, args.data)
    else:
        if not args.text:
            sys.exit("evaluate generator needs --text FILE")
        result = evaluate.evaluate_generator(ck, args.text, tail=args.tail)
    print(json.dumps(result))


def _average(args: argparse.Namespace) -> None:
    from pathlib import Path

    from model.core.checkpoint import default_dir, load_checkpoint, save_checkpoint
    from model.training import evaluate
    from model.training.train import average_snapshots, load_mean

    if bool(args.epochs) == bool(args.checkpoints):
        sys.exit("average needs --epochs (one run's snapshots) or --checkpoints (a soup of fine-tunes), not both")
    out = Path(args.out) if args.out else default_dir(args.task)
    base = Path(args.base) if args.base else Path(args.checkpoints[0]) if args.checkpoints else out
    ck = load_checkpoint(base, task=args.task)  # config and vocabularies
    if args.checkpoints:
        try:
            load_mean(ck.model, [Path(d) / "model.safetensors" for d in args.checkpoints])
        except (FileNotFoundError, ValueError) as err:
            sys.exit(str(err))
        results: dict = {"averaged_checkpoints": args.checkpoints}
    else:
        first, _, last = args.epochs.partition("-")
        epochs = list(range(int(first), int(last or first) + 1))
        work = Path(args.work) if args.work else Path("runs") / args.task
        try:
            average_snapshots(work, ck.model, 0, epochs)
        except FileNotFoundError as err:
            sys.exit(str(err))
        results = {"averaged_epochs": epochs}
    if ck.spec.output == "classes" and args.data:
        results.update(dev_accuracy=evaluate.evaluate_classifier(ck, args.data)["accuracy"])
    if ck.spec.output == "text" and args.src and args.ref:
        scores = evaluate.evaluate_translator(ck, args.src, args.ref, beam_size=1)
        results.update(
            val_bleu=scores["bleu"], val_sacrebleu=scores["sacrebleu"], val_sentences=scores.get("sentences")
        )
    kept = {k: v for k, v in results.items() if k.startswith("averaged_")}
    save_checkpoint(out, args.task, ck.model, ck.vocabs, training={**ck.training, **kept}, results=results)
    print(json.dumps({"out": str(out), **results}))


def _plain(value):
    """Arrays as lists, with null for the -inf of masked scores (JSON has no infinity)."""
    if hasattr(value, "tolist"):
        return [v if v == v and abs(v) != float("inf") else None for v in value.tolist()]
    return value


# what `hub --explain` prints of an Explanation, besides "weight" (the map's) and "recomputed"
EXPLAIN_FIELDS = (
    "query_from",
    "key_from",
    "q",
    "k",
    "product",
    "raw_score",
    "scale",
    "scale_text",
    "score",
    "mask",
    "mask_reasons",
    "scores",
    "weights",
    "output",
    "kv_head",
    "kv_heads",
    "q_unrotated",
    "k_unrotated",
    "query_angles",
    "key_angles",
    "rotary_scale",
    "norm",
    "softcap",
    "sliding_window",
    "position_split",
    "position_note",
)


def _explained(hub, result, kind: str, layer: int, head: int, query: int, key: int) -> dict:
    """One cell of a Hub model's run, step by step, as JSON: ``explained``, ``weight`` (the map's),
    ``recomputed`` (from the steps) and the steps; without them, and with the ``reason``, when the
    family is not recomputed here."""
    from model.core.explanation import NotExplained
    from model.hub.explain import explain

    view = result.kinds[kind]
    plain = {"kind": kind, "layer": layer, "head": head, "query": query, "key": key}
    try:
        e = explain(hub, result, kind, layer, head, query, key)
    except NotExplained as why:
        w = float(view.weights[layer, head, query, key])
        return {
            **plain,
            "query_token": view.queries[query],
            "key_token": view.keys[key],
            "weight": w,
            "explained": False,
            "reason": str(why),
        }
    return {
        **plain,
        "query_token": e.query_token,
        "key_token": e.key_token,
        "weight": e.map_weight,
        "explained": True,
        "recomputed": e.weight,
        **{f: _plain(getattr(e, f)) for f in EXPLAIN_FIELDS},
    }


def _hub(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from model.hub import HubError
    from model.hub.load import load
    from model.hub.run import run

    bar = tqdm(total=100, file=sys.stderr, bar_format="{percentage:3.0f}% {desc}")

    def progress(fraction: float, text: str) -> None:
        bar.n = round(100 * fraction)
        bar.set_description_str(text)

    try:
        hub = load(args.model, progress=progress, device=args.device, limit=args.max_params)
        bar.close()
        out = run(hub, args.text, generate=args.generate, target=args.target, max_tokens=args.max_tokens)
        cell = args.explain.split(",") if args.explain else None
        why = _explained(hub, out.result, cell[0], *map(int, cell[1:])) if cell else None
    except (HubError, KeyError, IndexError, ValueError) as err:
        bar.close()
        sys.exit(f"error: {err}")
    r = out.result
    report = {
        "model": args.model,
        "shape": hub.shape,
        "head": hub.head,
        "model_type": hub.model_type,
        "params": hub.params,
        "max_tokens": hub.max_tokens,
        "missing": list(hub.missing),
        "prediction": r.prediction,
        "probs": r.probs,
        "truncated": r.truncated,
        "unknown": r.unknown,
        "notes": r.notes,
        "kinds": {
            name: {
                "title": k.title,
                "shape": list(k.weights.shape),
                "query_axis": k.query_axis,
                "key_axis": k.key_axis,
                "queries": k.queries,
                "keys": k.keys,
            }
            for name, k in r.kinds.items()
        },
        "steps": [{"position": s.position, "token": s.token, "prob": round(s.prob, 6)} for s in out.steps],
    }
    if why is not None:
        report["explain"] = why
    print(json.dumps(report, ensure_ascii=False, default=float))


def _heads(args: argparse.Namespace) -> None:
    """Score every head of a model over a corpus (model.analysis.head_scan); one JSON object. Under torchrun
    each process reads a share of the corpus and rank 0 prints the whole corpus's scores."""
    from tqdm import tqdm

    from model.analysis import distributed
    from model.analysis.head_scan import (
        CorpusError,
        corpus_name,
        default_corpus,
        hub_reader,
        our_reader,
        read_corpus,
        scan,
    )
    from model.core.checkpoint import CheckpointError, default_dir, load_checkpoint, weights_digest
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
        if args.source in SPECS:
            ck = load_checkpoint(default_dir(args.source), task=args.source, device=device)
            reader = our_reader(ck, args.max_tokens)
        else:
            from model.hub.load import load

            hub = load(args.source, progress=progress, device=device, limit=args.max_params)
            reader = hub_reader(hub, args.max_tokens)
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


def _attribute(args: argparse.Namespace) -> None:
    """Every contribution method for one query row (model.analysis.attribute); JSON, or a short summary."""
    from model.core.checkpoint import CheckpointError, default_dir, load_checkpoint
    from model.core.devices import choose
    from model.core.specs import SPECS
    from model.hub import HubError

    try:
        device = choose(args.device)
        if args.source in SPECS:
            from model.analysis.attribute import attribute
            from model.analysis.runs import run

            ck = load_checkpoint(default_dir(args.source), task=args.source, device=device)
            result = run(ck, args.text)
            kind = args.kind or ck.spec.kind_names[0]
            ck.spec.kind(kind)  # a kind the model lacks: the message lists its kinds
            a = attribute(ck, result.inputs, kind, args.query, view=result.kinds[kind])
        else:
            from model.hub.attribute import attribute
            from model.hub.load import load
            from model.hub.run import run

            hub = load(args.source, device=device, limit=args.max_params)
            result = run(hub, args.text, max_tokens=args.max_tokens).result
            a = attribute(hub, result, args.kind or next(iter(result.kinds)), args.query)
    except (CheckpointError, HubError, ValueError) as err:
        sys.exit(f"error: {err}")
    if args.json:
        print(json.dumps(a.to_json(), ensure_ascii=False))
        return
    print(f"{a.kind} attention, query {a.query} ({a.query_token!r}) of {a.model}")
    for name, rho in a.agreement.items():
        print(f"  {name:15s} Spearman ρ with attention {rho:+.2f}")
    for name, why in a.absent.items():
        print(f"  {name:15s} absent: {why}")
    print(a.disagreement)


def _snapshots(args: argparse.Namespace) -> None:
    """Score every kept snapshot of a training run and add each role's best head to ``history.json``."""
    from pathlib import Path

    from model.analysis.head_scan import default_corpus, read_corpus
    from model.analysis.snapshots import score_snapshots, write_roles
    from model.core.checkpoint import CheckpointError, default_dir, load_checkpoint
    from model.core.devices import pick_device

    out = Path(args.checkpoint) if args.checkpoint else default_dir(args.task)
    try:
        ck = load_checkpoint(out, task=args.task, device=pick_device(args.device))
        lines = read_corpus(args.corpus or default_corpus(ck.spec))
        scored = score_snapshots(
            ck,
            Path(args.work),
            lines,
            progress=lambda i, n: print(f"snapshot {i} of {n}", file=sys.stderr),
            each=lambda so_far: write_roles(out, so_far, Path(args.work)),  # a stopped run keeps what it scored
        )
    except (CheckpointError, FileNotFoundError, ValueError) as err:
        sys.exit(f"error: {err}")
    print(json.dumps({str(e): v for e, v in scored.items()}))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m model", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    from model.core.specs import SPECS

    tasks = list(SPECS)

    t = sub.add_parser("train", help="train a model; resumes from --work after an interruption")
    t.add_argument("task", choices=tasks)
    t.add_argument("--data-dir", default=None, help=f"dataset directory (default: $ATTENTION_DATA_DIR or {data_dir()})")
    t.add_argument("--out", default=None, help="where the best checkpoint goes (default: checkpoints/<task>)")
    t.add_argument("--work", default=None, help="resumable state and snapshots (default: runs/<task>)")
    t.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda, mps")
    for name, typ in TRAIN_OPTIONS:
        t.add_argument(f"--{name}", type=typ, default=None)
    t.add_argument("--keep-snapshots", action="store_true", help="keep every evaluation's weights in --work")
    t.add_argument("--set", action="append", metavar="KEY=JSON", help="override a model setting, e.g. --set dim=128")
    t.set_defaults(func=_train)

    e = sub.add_parser("evaluate", help="print one JSON object of metrics")
    e.add_argument("task", choices=tasks)
    e.add_argument("--checkpoint", default=None, help="checkpoint directory (default: the shipped one)")
    e.add_argument("--src", help="translator: German sentences, one per line (plain or .gz)")
    e.add_argument("--ref", help="translator: English references, one per line (plain or .gz)")
    e.add_argument("--beam", type=int, default=1, help="translator: beam size (1 = greedy)")
    e.add_argument("--data", help="classifier: 'label sentence' lines")
    e.add_argument("--text", help="generator: a text file")
    e.add_argument(
        "--tail",
        type=float,
        default=None,
        metavar="FRACTION",
        help="generator: score only the last FRACTION of the text (0.1 = the validation split)",
    )
    e.add_argument("--device", default="auto")
    e.set_defaults(func=_evaluate)

    a = sub.add_parser("average", help="ship the mean of saved epoch snapshots, or of checkpoints, as a checkpoint")
    a.add_argument("task", choices=tasks)
    a.add_argument("--epochs", default=None, help="a range of snapshot epochs, e.g. 9-16")
    a.add_argument("--checkpoints", nargs="+", default=None, help="checkpoint directories fine-tuned from one start")
    a.add_argument("--data", help="classifier: labelled sentences, to record the averaged model's accuracy")
    a.add_argument("--work", default=None, help="where the snapshots are (default: runs/<task>)")
    a.add_argument("--base", default=None, help="checkpoint giving config and vocabularies (default: --out)")
    a.add_argument("--out", default=None, help="where the averaged checkpoint goes (default: checkpoints/<task>)")
    a.add_argument("--src", help="translator: validation German, to record the averaged model's BLEU")
    a.add_argument("--ref", help="translator: validation English")
    a.set_defaults(func=_average)

    h = sub.add_parser("hub", help="run a Hugging Face model (Hub id or folder) on a text; print JSON")
    h.add_argument("model", help="a Hub id (gpt2, bert-base-uncased, Helsinki-NLP/opus-mt-de-en) or a local folder")
    h.add_argument("text")
    h.add_argument(
        "--generate",
        type=int,
        default=0,
        metavar="N",
        help="decoders: generate N tokens greedily; encoder-decoders: at most N (default: by input length)",
    )
    h.add_argument("--target", default=None, help="encoder-decoders: read this output teacher-forced instead")
    h.add_argument(
        "--explain",
        default=None,
        metavar="KIND,LAYER,HEAD,QUERY,KEY",
        help="also explain one weight, e.g. cross,0,1,2,3",
    )
    h.add_argument(
        "--max-tokens", type=int, default=None, help="read at most this many tokens (default: the model's maximum)"
    )
    h.add_argument(
        "--max-params", type=int, default=None, help="parameter cap (default: $ATTENTION_HUB_MAX_PARAMS or 150M)"
    )
    h.add_argument("--device", default="cpu")
    h.set_defaults(func=_hub)

    sn = sub.add_parser("snapshots", help="score each kept training snapshot's heads into history.json")
    sn.add_argument("task", choices=tasks)
    sn.add_argument("--work", required=True, help="the training run's work directory (trained with --keep-snapshots)")
    sn.add_argument("--checkpoint", default=None, help="the checkpoint whose history.json gets the scores")
    sn.add_argument("--corpus", default=None, help="a text file, one sequence a line (default: the model's sample)")
    sn.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda, mps")
    sn.set_defaults(func=_snapshots)

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
    hd.set_defaults(func=_heads)

    at = sub.add_parser("attribute", help="contributions beside attention for one query token; print JSON")
    at.add_argument("source", help="classifier, generator, translator, a Hub id or a local folder")
    at.add_argument("text")
    at.add_argument("--query", type=int, required=True, help="the query position (0-based)")
    at.add_argument("--kind", default=None, help="encoder, decoder or cross (default: the model's first kind)")
    at.add_argument("--max-tokens", type=int, default=128, help="Hub models: read at most this many tokens")
    at.add_argument("--max-params", type=int, default=None, help="Hub models: parameter cap (default 150M)")
    at.add_argument("--json", action="store_true", help="print the JSON object instead of a summary")
    at.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda, mps")
    at.set_defaults(func=_attribute)

    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
