"""How the real model computed one attention weight: every number of one cell, from its own tensors.

:func:`explain` runs the model once over the ids a run recorded (``RunResult.inputs``) with
``return_attention`` and a :class:`~model.nets.attention.Probe` for the chosen kind and layer, so the
query, key and value vectors, the mask and the per-head output are the ones that forward pass
computed (no hooks, no copy of the weights). From them it rebuilds the cell step by step in float64 —
dot product, scaling, mask, softmax, weighted sum — and keeps the map's own weight beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from model.core.inference import model_device
from model.nets.attention import AttentionTrace, Probe
from model.core.checkpoint import Checkpoint

KINDS = {"classifier": ("encoder",), "generator": ("encoder",), "translator": ("encoder", "decoder", "cross")}
INPUTS = {"classifier": ("ids",), "generator": ("ids",), "translator": ("src", "tgt")}


@dataclass(frozen=True, eq=False)
class Explanation:
    """One attention weight, step by step. Vectors are float64 numpy arrays; ``s`` is ``head_dim``."""

    task: str
    kind: str  # "encoder", "decoder" or "cross"
    layer: int
    head: int
    query: int  # query position
    key: int  # key position
    query_tokens: list[str]  # every query position, as the model read it
    key_tokens: list[str]
    query_from: str  # where the query vector came from, in words
    key_from: str
    dim: int  # model width
    heads: int
    head_dim: int  # s: narrow heads dim // heads, wide heads dim
    wide: bool
    query_input: np.ndarray  # (dim,) the hidden state that W_q turned into q_i
    key_input: np.ndarray | None  # (dim,) the hidden state that W_k turned into k_j
    q: np.ndarray  # (s,) q_i: this head's slice of W_q · query_input (+ bias)
    k: np.ndarray  # (s,) k_j
    product: np.ndarray  # (s,) q_i * k_j, elementwise
    raw_score: float  # q_i · k_j, the sum of ``product``
    split_scale: bool  # q and k each divided by s^¼ instead of the score by √s
    scale: float  # the factor on the raw score: 1 / √s either way
    scale_text: str  # how the model scales, in words
    score: float  # raw_score * scale
    raw_scores: np.ndarray  # (keys,) q_i · k for every key of the row
    mask: np.ndarray  # (keys,) bool: True where this query may attend
    mask_reasons: list[str]  # per key: "" (visible), "future" (causal), "padding"
    scores: np.ndarray  # (keys,) scaled scores, -inf where masked: what the softmax sees
    weights: np.ndarray  # (keys,) the softmax of ``scores``
    weight: float  # weights[key], recomputed here
    map_weight: float  # the same cell of the model's own attention map (float32)
    values: np.ndarray  # (keys, s) this head's value vectors
    head_factor: float  # the head mask's factor on this head's output (1 unless switched off)
    output: np.ndarray  # (s,) head_factor * weights @ values: this head's output for the query
    model_output: np.ndarray  # (s,) the same row of the module's per-head output, before unify

    @property
    def query_token(self) -> str:
        return self.query_tokens[self.query]

    @property
    def key_token(self) -> str:
        return self.key_tokens[self.key]

    @property
    def masked(self) -> bool:
        """The model could not attend from this query to this key (its weight is 0)."""
        return not self.mask[self.key]

    @property
    def share(self) -> np.ndarray:
        """``(s,)`` this key's part of ``output``: its weight times its value vector."""
        return self.head_factor * self.weight * self.values[self.key]

    @property
    def concat_shape(self) -> tuple[int, int]:
        """Every head's output side by side for all queries: ``(queries, heads * s)``."""
        return len(self.query_tokens), self.heads * self.head_dim

    @property
    def unify_shape(self) -> tuple[int, int]:
        """The output projection ``unify``: ``heads * s`` numbers in, ``dim`` out."""
        return self.heads * self.head_dim, self.dim


def explain(
    ck: Checkpoint,
    inputs: dict[str, list[int]],
    kind: str,
    layer: int,
    head: int,
    query: int,
    key: int,
    *,
    head_mask: Tensor | dict[str, Tensor] | None = None,
) -> Explanation:
    """Explain cell ``(query, key)`` of head ``head`` in ``layer`` of ``kind`` attention of ``ck``'s model.

    ``inputs`` is ``RunResult.inputs``: ``{"ids": [...]}`` for the classifier and generator,
    ``{"src": [...], "tgt": [...]}`` (the decoder inputs of the teacher-forced pass) for the
    translator; pass the run's ``head_mask`` too if it switched heads off. Raises a ValueError that
    says what to fix when an argument does not fit the model.
    """
    model, task = ck.model, ck.task
    if task not in KINDS:
        raise ValueError(f"explain works on the classifier, generator and translator, not {task!r}")
    if model.training:
        raise ValueError("the model is in training mode (dropout); explain needs it in eval mode")
    tensors = _input_tensors(ck, inputs)
    layers, heads = _layout(ck, kind)
    if not 0 <= layer < layers:
        raise ValueError(f"{kind} layer {layer} does not exist; choose 0..{layers - 1}")
    if not 0 <= head < heads:
        raise ValueError(f"head {head} does not exist; choose 0..{heads - 1}")
    query_ids, key_ids = _axis_ids(task, kind, inputs)
    if not 0 <= query < len(query_ids):
        raise ValueError(f"query {query} is outside the {len(query_ids)} query positions (0..{len(query_ids) - 1})")
    if not 0 <= key < len(key_ids):
        raise ValueError(f"key {key} is outside the {len(key_ids)} key positions (0..{len(key_ids) - 1})")
    probe = Probe(kind, layer)
    with torch.inference_mode():
        kwargs = {} if head_mask is None else {"head_mask": head_mask}
        _, maps = model(*tensors, return_attention=True, probe=probe, **kwargs)
    trace = probe.trace
    map_weight = float(getattr(maps, kind)[layer][0, head, query, key])
    factor = _head_factor(head_mask, kind, layer, head)
    q_vocab, k_vocab = _vocabs(ck, kind)
    cell = _cell(trace, head, query, key, factor)
    return Explanation(
        task=task,
        kind=kind,
        layer=layer,
        head=head,
        query=query,
        key=key,
        query_tokens=[q_vocab.itos[i] for i in query_ids],
        key_tokens=[k_vocab.itos[i] for i in key_ids],
        query_from=_source(task, kind, "query", layer, query),
        key_from=_source(task, kind, "key", layer, key),
        dim=model.config.dim,
        heads=heads,
        head_dim=trace.q.size(-1),
        wide=model.config.wide,
        split_scale=trace.split_scale,
        scale_text=scale_text(trace.q.size(-1), trace.split_scale),
        mask_reasons=_reasons(cell["mask"], query, key_ids, task, kind, getattr(model.config, "pad_id", None)),
        map_weight=map_weight,
        head_factor=factor,
        **cell,
    )


def scale_text(s: int, split_scale: bool) -> str:
    """How scores are scaled, in words, with the numbers filled in."""
    root, quarter = math.sqrt(s), s**0.25
    if split_scale:
        return (
            f"q and k are each divided by s^¼ = {s}^¼ = {quarter:.4g} before the product: "
            f"together ÷ {quarter:.4g}² = ÷ √{s} = ÷ {root:.4g}"
        )
    return f"the score is divided by √s = √{s} = {root:.4g}"


def _cell(trace: AttentionTrace, head: int, query: int, key: int, factor: float) -> dict:
    """The numbers of one cell, rebuilt in float64 from the traced tensors of batch item 0."""
    as64 = lambda t: t.detach().to("cpu", torch.float64).numpy()  # noqa: E731
    q, K, V = as64(trace.q[0, head, query]), as64(trace.k[0, head]), as64(trace.v[0, head])
    s = q.shape[0]
    if trace.mask is None:
        mask = np.ones(K.shape[0], dtype=bool)
    else:  # (T, T) causal, (B, 1, 1, T) padding or (B, 1, T, T) both
        mask = torch.broadcast_to(trace.mask, trace.weights.shape)[0, head, query].cpu().numpy().astype(bool)
    raw = K @ q
    scale = 1.0 / math.sqrt(s)
    scores = np.where(mask, raw * scale, -np.inf)
    weights = np.zeros_like(raw)
    if mask.any():  # a row with no visible key attends to nothing (the model's rule, not NaN)
        e = np.exp(scores - scores[mask].max())
        weights = e / e.sum()
    key_input = None if trace.context is None else as64(trace.context[0, key])
    return {
        "query_input": as64(trace.x[0, query]),
        "key_input": key_input,
        "q": q,
        "k": K[key],
        "product": q * K[key],
        "raw_score": float(raw[key]),
        "scale": scale,
        "score": float(raw[key] * scale),
        "raw_scores": raw,
        "mask": mask,
        "scores": scores,
        "weights": weights,
        "weight": float(weights[key]),
        "values": V,
        "output": factor * (weights @ V),
        "model_output": as64(trace.heads[0, head, query]),
    }


def _input_tensors(ck: Checkpoint, inputs: dict[str, list[int]]) -> tuple[Tensor, ...]:
    """The forward pass's arguments from ``inputs``, checked against the model's vocabularies and lengths."""
    model, dev = ck.model, model_device(ck)
    names = INPUTS[ck.task]
    if not isinstance(inputs, dict) or set(names) - set(inputs):
        raise ValueError(f"the {ck.task} needs inputs {{{', '.join(repr(n) for n in names)}}}: RunResult.inputs")
    c = model.config
    limit = c.block_size if ck.task == "generator" else c.max_len
    sizes = {"ids": getattr(c, "vocab_size", None), "src": getattr(c, "src_vocab_size", None),
             "tgt": getattr(c, "tgt_vocab_size", None)}  # fmt: skip
    out = []
    for name in names:
        ids = [int(i) if isinstance(i, (int, np.integer)) else i for i in inputs[name]]
        if not ids:
            raise ValueError(f"inputs[{name!r}] is empty; explain needs the ids the model read")
        if len(ids) > limit:
            raise ValueError(f"inputs[{name!r}] has {len(ids)} ids; the model reads at most {limit}")
        if not all(isinstance(i, int) and 0 <= i < sizes[name] for i in ids):
            raise ValueError(f"inputs[{name!r}] holds ids outside the vocabulary (0..{sizes[name] - 1})")
        out.append(torch.tensor([ids], device=dev))
    return tuple(out)


def _layout(ck: Checkpoint, kind: str) -> tuple[int, int]:
    """``(layers, heads)`` of ``kind`` attention; ValueError when the model has none."""
    if kind not in KINDS[ck.task]:
        raise ValueError(f"the {ck.task} has no {kind!r} attention; choose one of {', '.join(KINDS[ck.task])}")
    m = ck.model
    blocks = m.blocks if ck.task != "translator" else (m.encoder if kind == "encoder" else m.decoder)
    return len(blocks), m.config.heads


def _axis_ids(task: str, kind: str, inputs: dict[str, list[int]]) -> tuple[list[int], list[int]]:
    if task != "translator":
        return list(inputs["ids"]), list(inputs["ids"])
    side = {"encoder": ("src", "src"), "decoder": ("tgt", "tgt"), "cross": ("tgt", "src")}[kind]
    return list(inputs[side[0]]), list(inputs[side[1]])


def _vocabs(ck: Checkpoint, kind: str):
    v = ck.vocabs
    if ck.task == "classifier":
        return v["words"], v["words"]
    if ck.task == "generator":
        return v["chars"], v["chars"]
    return {"encoder": (v["src"], v["src"]), "decoder": (v["tgt"], v["tgt"]), "cross": (v["tgt"], v["src"])}[kind]


def _head_factor(head_mask: Tensor | dict[str, Tensor] | None, kind: str, layer: int, head: int) -> float:
    """The factor ``head_mask`` puts on this head's output (1.0 without one)."""
    if head_mask is None:
        return 1.0
    m = head_mask.get(kind) if isinstance(head_mask, dict) else head_mask
    return 1.0 if m is None else float(m[layer, head])


def _reasons(mask: np.ndarray, query: int, key_ids: list[int], task: str, kind: str, pad_id: int | None) -> list[str]:
    """Why each key of the row is hidden: "future" (causal), "padding", or "" when it is visible."""
    causal = (task, kind) in {("generator", "encoder"), ("translator", "decoder")}
    reasons = []
    for j, (visible, token) in enumerate(zip(mask, key_ids)):
        if visible:
            reasons.append("")
        elif causal and j > query:
            reasons.append("future")
        elif pad_id is not None and token == pad_id:
            reasons.append("padding")
        else:
            reasons.append("masked")
    return reasons


def _source(task: str, kind: str, side: str, layer: int, pos: int) -> str:
    """Where the query or key vector came from, in words."""
    attention = "cross-attention" if kind == "cross" else "self-attention"
    state = f"position {pos}'s hidden state entering layer {layer}'s {attention}"
    if kind == "cross" and side == "key":
        return f"the encoder output (German): position {pos} of the memory, the same for every decoder layer"
    where = {"classifier": "the sentence", "generator": "the text so far", "encoder": "the German source (encoder)",
             "decoder": "the English so far (decoder)", "cross": "the decoder (English)"}  # fmt: skip
    return f"{where[task if task != 'translator' else kind]}: {state}"
