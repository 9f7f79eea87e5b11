"""``python -m model hub MODEL TEXT``: run a Hugging Face model (a Hub id or a folder) on a text; print JSON."""

from __future__ import annotations

import argparse
import json
import sys


def add(sub, tasks: list[str]) -> None:
    h = sub.add_parser("hub", help="run a Hugging Face model (Hub id or folder) on a text; print JSON")
    h.add_argument("model", help="a Hub id (gpt2, bert-base-uncased, Helsinki-NLP/opus-mt-de-en) or a local folder")
    h.add_argument("text", help="the input text")
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
    h.add_argument("--device", default="cpu", help="cpu (default), cuda, mps")
    h.set_defaults(func=run)


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


def run(args: argparse.Namespace) -> None:
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
    report = _report(args.model, hub, out)
    if why is not None:
        report["explain"] = why
    print(json.dumps(report, ensure_ascii=False, default=float))


def _report(source: str, hub, out) -> dict:
    """What ``hub`` prints of a run: the model, its prediction and every kind's shape, axes and tokens."""
    r = out.result
    return {
        "model": source,
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
