"""How the real model computed one attention weight: every number of one cell, from its own tensors.

:func:`explain` runs the model once over the ids a run recorded (``RunResult.inputs``) with
``return_attention`` and a :class:`~model.nets.attention.Probe` for the chosen kind and layer, so the
query, key and value vectors, the mask and the per-head output are the ones that forward pass
computed (no hooks, no copy of the weights). From them it rebuilds the cell step by step in float64 —
dot product, scaling, mask, softmax, weighted sum (:func:`model.core.explanation.row_steps`) — and
keeps the map's own weight beside it. What differs between our three models (their kinds, inputs,
vocabularies, masks) is read from the checkpoint's :class:`~model.core.specs.ModelSpec`.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from model.core.checkpoint import Checkpoint
from model.core.explanation import Explanation, mask_reasons, position_split, row_steps, scale_text
from model.core.inputs import input_tensors
from model.nets.attention import Probe


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
    model, spec = ck.model, ck.spec
    if model.training:
        raise ValueError("the model is in training mode (dropout); explain needs it in eval mode")
    tensors = input_tensors(ck, inputs)
    k_spec = spec.kind(kind)
    layers, heads = len(getattr(model, k_spec.blocks)), model.config.heads
    if not 0 <= layer < layers:
        raise ValueError(f"{kind} layer {layer} does not exist; choose 0..{layers - 1}")
    if not 0 <= head < heads:
        raise ValueError(f"head {head} does not exist; choose 0..{heads - 1}")
    query_ids, key_ids = list(inputs[k_spec.query_input]), list(inputs[k_spec.key_input])
    if not 0 <= query < len(query_ids):
        raise ValueError(f"query {query} is outside the {len(query_ids)} query positions (0..{len(query_ids) - 1})")
    if not 0 <= key < len(key_ids):
        raise ValueError(f"key {key} is outside the {len(key_ids)} key positions (0..{len(key_ids) - 1})")
    probe = Probe(kind, layer)
    with torch.inference_mode():
        kwargs = {} if head_mask is None else {"head_mask": head_mask}
        _, maps = model(*tensors, return_attention=True, probe=probe, **kwargs)
    t = probe.trace
    as64 = lambda x: x.detach().to("cpu", torch.float64).numpy()  # noqa: E731
    if t.mask is None:
        mask = np.ones(len(key_ids), dtype=bool)
    else:  # (T, T) causal, (B, 1, 1, T) padding or (B, 1, T, T) both
        mask = torch.broadcast_to(t.mask, t.weights.shape)[0, head, query].cpu().numpy().astype(bool)
    s = t.q.size(-1)
    steps = row_steps(
        as64(t.q[0, head, query]),
        as64(t.k[0, head]),
        as64(t.v[0, head]),
        mask,
        1.0 / s**0.5,
        key,
        _head_factor(head_mask, kind, layer, head),
    )
    pad = getattr(model.config, "pad_id", None)
    q_vocab, k_vocab = ck.vocabs[k_spec.query_vocab], ck.vocabs[k_spec.key_vocab]
    return Explanation(
        model=ck.task,
        kind=kind,
        layer=layer,
        head=head,
        query=query,
        key=key,
        query_tokens=[q_vocab.itos[i] for i in query_ids],
        key_tokens=[k_vocab.itos[i] for i in key_ids],
        query_from=_source(k_spec.query_from, kind, layer, query),
        key_from=_source(k_spec.key_from or k_spec.query_from, kind, layer, key),
        dim=model.config.dim,
        heads=heads,
        head_dim=s,
        wide=model.config.wide,
        split_scale=t.split_scale,
        scale_text=scale_text(s, t.split_scale),
        mask_reasons=mask_reasons(
            mask, query, causal=k_spec.causal, padding=None if pad is None else [i == pad for i in key_ids]
        ),
        map_weight=float(getattr(maps, kind)[layer][0, head, query, key]),
        query_input=as64(t.x[0, query]),
        key_input=None if t.context is None else as64(t.context[0, key]),
        model_output=as64(t.heads[0, head, query]),
        **_why_this_weight(ck, kind, layer, head, query_ids[query], query, key_ids[key], key),
        **steps,
    )


# the token and position embedding tables of each stack of blocks (KindSpec.blocks) of our models
EMBEDDINGS = {"blocks": ("tok_emb", "pos_emb"), "encoder": ("src_emb", "src_pos"), "decoder": ("tgt_emb", "tgt_pos")}


def _why_this_weight(ck: Checkpoint, kind: str, layer: int, head: int, q_id: int, query: int, k_id: int, key: int):
    """The Explanation's ``position_split`` at layer 0 of self-attention (its input is token × √dim plus a
    learned position, through the block's pre-norm where it has one), else the ``position_note``."""
    k_spec = ck.spec.kind(kind)
    if k_spec.cross:
        return {"position_note": "cross-attention's queries and keys come from two different stacks: no split"}
    if layer != 0:
        return {"position_note": "only layer 0 reads the embeddings directly; later layers have mixed them"}
    model = ck.model
    block = getattr(model, k_spec.blocks)[0]
    attn = block.attn if hasattr(block, "attn") else block.self_attn
    tok, pos = (getattr(model, n).weight.detach().to("cpu", torch.float64) for n in EMBEDDINGS[k_spec.blocks])
    root = tok.shape[1] ** 0.5  # model.nets.blocks.embed scales token embeddings by √width
    norm = block.norm1 if block.norm_first else None
    s = attn.head_dim
    rows = slice(head * s, (head + 1) * s)
    as64 = lambda x: None if x is None else x.detach().to("cpu", torch.float64).numpy()  # noqa: E731
    split = position_split(
        tok[q_id].numpy() * root,
        pos[query].numpy(),
        tok[k_id].numpy() * root,
        pos[key].numpy(),
        as64(attn.to_q.weight[rows]),
        as64(None if attn.to_q.bias is None else attn.to_q.bias[rows]),
        as64(attn.to_k.weight[rows]),
        as64(None if attn.to_k.bias is None else attn.to_k.bias[rows]),
        1.0 / s**0.5,
        None if norm is None else (as64(norm.weight), as64(norm.bias), norm.eps),
    )
    return {"position_split": split}


def _head_factor(head_mask: Tensor | dict[str, Tensor] | None, kind: str, layer: int, head: int) -> float:
    """The factor ``head_mask`` puts on this head's output (1.0 without one)."""
    if head_mask is None:
        return 1.0
    m = head_mask.get(kind) if isinstance(head_mask, dict) else head_mask
    return 1.0 if m is None else float(m[layer, head])


def _source(where: str, kind: str, layer: int, pos: int) -> str:
    """Where a query or key vector came from, in words (the description's ``query_from``/``key_from``)."""
    if "{pos}" in where:  # the translator's memory: the same for every decoder layer
        return where.format(pos=pos)
    attention = "cross-attention" if kind == "cross" else "self-attention"
    return f"{where}: position {pos}'s hidden state entering layer {layer}'s {attention}"
