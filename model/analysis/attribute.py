"""Contributions beside attention for our own models: their :class:`~model.analysis.contributions.Sources`,
read from :class:`~model.nets.attention.Probe` traces of one forward pass, assembled by
:func:`model.analysis.contributions.assemble` (the measures, their formulas and papers are there), plus the
translator's source share.

One pass over the run's ids, with gradients, on a *shadow* of the model (a copy sharing every parameter,
whose blocks and attention modules are hooked; the model every session shares is not touched) records each
block's input and each attention call's trace (its value vectors, per-head output and mask); the weights are
the pass's own ``return_attention`` maps. f_lh(x_j) is head h's value vector through its slice of the output
projection ``unify``.

Value zeroing needs only layer l's output at I: a value vector enters that output through the
attention row of I alone, so the block is re-run on a one-position sequence, position I's residual
input, with its attention output replaced by the K + 1 versions (as computed; without each key's value,
Σ_h unify(a[h,I,·] v[h,·]) minus that key's term), all in one batch: K small re-runs per layer instead
of K full passes. The block's own code does the norms, residuals and feed-forward; nothing of the shared
model changes (the re-run uses a copy of the block whose attention modules return the given outputs).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from model.analysis.contributions import (
    CONTRIBUTIONS,
    METHODS,
    Attribution,
    Sources,
    alti,
    assemble,
    norms,
    ranks,
    rollout_rows,
    shadow,
    spearman,
    value_zeroing,
)
from model.core.checkpoint import Checkpoint
from model.core.inputs import input_tensors
from model.core.results import AttentionKind
from model.nets.attention import Probe

# the measures and the record live in model.analysis.contributions; their names stay importable from here
__all__ = [
    "CONTRIBUTIONS",
    "METHODS",
    "Attribution",
    "alti",
    "attribute",
    "norms",
    "ranks",
    "rerun_with_outputs",
    "rollout_rows",
    "score_of",
    "shadow",
    "source_share",
    "sources",
    "spearman",
    "value_zeroing",
]


def source_share(blocks, traces: dict, block_args: list) -> Tensor:
    """``(L, T)``: per decoder layer and output word, the source's share of the cross-attention sublayer's
    output, by ALTI (:func:`alti`) over its parts: the residual stream entering it (what the words already
    written gave) and, per source word j, Σ_h a[h,i,j] · f_h(m_j) (Kobayashi's transformed value, from the
    encoder memory). The output bias, shared by every part, stays in y and in no part. This is ALTI+'s
    per-layer step (its §3) without its rollout over layers: the source words' own mixing in the encoder
    and the words' mixing in earlier decoder layers are not followed back."""
    shares = []
    for l, block in enumerate(blocks):
        own, cross = traces[(l, "self_attn")].trace, traces[(l, "cross_attn")].trace
        x = block_args[l][0][0].detach()  # (T, dim) the block's input
        T = x.shape[0]
        h_self = block.self_attn.unify(own.heads[0].transpose(0, 1).reshape(T, -1)).detach()
        # the residual entering cross-attention: pre-norm adds to the stream, post-norm normalises the sum
        r = x + h_self if block.norm_first else block.norm1(x + h_self).detach()
        attn = block.cross_attn
        a, v = cross.weights[0].detach(), cross.v[0].detach()  # (H, T, S), (H, S, s)
        H, S, s = v.shape
        f = torch.einsum("hks,dhs->hkd", v, attn.unify.weight.detach().view(attn.dim, H, s))  # (H, S, dim)
        from_source = torch.einsum("hts,hsd->tsd", a, f)  # (T, S, dim)
        bias = attn.unify.bias.detach() if attn.unify.bias is not None else 0
        y = r + from_source.sum(1) + bias
        c = alti(torch.cat([r[:, None], from_source], dim=1), y)
        shares.append(c[:, 1:].sum(-1))
    return torch.stack(shares)


def rerun_with_outputs(block: nn.Module, x: Tensor, replaced: dict[str, Tensor], *args) -> Tensor:
    """``block`` run on ``x`` ``(N, 1, dim)`` with each attention module named in ``replaced`` returning the
    given output ``(N, 1, dim)`` instead of attending: the block's own norms, residuals and feed-forward."""
    twin = shadow(block)
    for name, out in replaced.items():
        getattr(twin, name).forward = lambda *a, _out=out, **k: (_out, None)
    with torch.no_grad():
        return twin(x, *args)[0]


def score_of(ck: Checkpoint, logits: Tensor, kind: str, query: int) -> tuple[Tensor, str]:
    """The score the page shows, for gradient × attention, with its description: the predicted class's
    logit (classifier), the next character's (generator), the word written at the query position
    (translator decoder and cross rows) or, for its encoder rows, the sum of every written word's logit."""
    out = ck.spec.output
    if out == "classes":
        c = int(logits[0].argmax())
        return logits[0, c], f"the logit of the predicted class {c}"
    if out == "next":
        c = int(logits[0, -1].argmax())
        return logits[0, -1, c], "the logit of the predicted next character"
    best = logits[0].max(-1).values
    if kind == "encoder":
        return best.sum(), "the sum of the logits of every word written (teacher-forced)"
    return best[query], f"the logit of the word written at position {query}"


def attribute(
    ck: Checkpoint, inputs: dict[str, list[int]], kind: str, query: int, *, view: AttentionKind | None = None
) -> Attribution:
    """Every method for query ``query`` of ``kind`` attention of ``ck``'s model on ``inputs``
    (``RunResult.inputs``); ``view``, the run's kind, gives the tokens as the explorer shows them (else
    the vocabulary's). ValueError that says what to fix for a kind or query the model lacks."""
    return assemble(sources(ck, inputs, kind, query, view=view))


def sources(
    ck: Checkpoint, inputs: dict[str, list[int]], kind: str, query: int, *, view: AttentionKind | None = None
) -> Sources:
    """What :func:`attribute` assembles: one pass of a hooked shadow of ``ck``'s model (module docstring)."""
    model, spec = ck.model, ck.spec
    if model.training:
        raise ValueError("the model is in training mode (dropout); attribution needs it in eval mode")
    k_spec = spec.kind(kind)
    tensors = input_tensors(ck, inputs)
    q_ids, k_ids = list(inputs[k_spec.query_input]), list(inputs[k_spec.key_input])
    if not 0 <= query < len(q_ids):
        raise ValueError(f"query {query} is outside the input: choose 0..{len(q_ids) - 1}")
    twin = shadow(model)
    blocks = getattr(twin, k_spec.blocks)
    attn_name = {"encoder": "attn", "decoder": "self_attn", "cross": "cross_attn"}[kind]
    if not hasattr(blocks[0], attn_name):  # the translator's encoder blocks call theirs "attn"
        attn_name = "attn"
    block_args: list = []
    traces: dict[tuple[int, str], Probe] = {}

    def record_block(module, args):
        block_args.append(args)

    def give_probe(layer: int, name: str):
        def hook(module, args, kwargs):
            kwargs["probe"] = traces[(layer, name)] = Probe(kind, layer)
            return args, kwargs

        return hook

    names = [n for n in ("attn", "self_attn", "cross_attn") if hasattr(blocks[0], n)]
    for l, b in enumerate(blocks):
        b.register_forward_pre_hook(record_block)
        for n in names:
            getattr(b, n).register_forward_pre_hook(give_probe(l, n), with_kwargs=True)
    with torch.enable_grad():
        logits, maps = twin(*tensors, return_attention=True)
    weights = getattr(maps, kind)  # (1, H, Tq, Tk) per layer, the tensors the outputs were computed from
    transformed = [_transformed(getattr(b, attn_name), traces[(l, attn_name)]) for l, b in enumerate(blocks)]
    own = getattr(model, k_spec.blocks)

    def zeroed(l: int) -> Tensor:
        return _zeroed_outputs(own[l], blocks[l], attn_name, traces, block_args[l], l, query, transformed[l])

    score, score_text = score_of(ck, logits, kind, query)
    mask = traces[(0, attn_name)].trace.mask
    visible = (
        np.ones(len(k_ids), dtype=bool)
        if mask is None
        else torch.broadcast_to(mask, weights[0].shape)[0, 0, query].cpu().numpy().astype(bool)
    )
    q_vocab, k_vocab = ck.vocabs[k_spec.query_vocab], ck.vocabs[k_spec.key_vocab]
    return Sources(
        model=ck.task,
        kind=kind,
        query=query,
        query_tokens=list(view.queries) if view is not None else [q_vocab.itos[i] for i in q_ids],
        key_tokens=list(view.keys) if view is not None else [k_vocab.itos[i] for i in k_ids],
        visible=visible,
        weights=weights,
        transformed=transformed,
        zeroed=zeroed,
        score=score,
        score_text=score_text,
        cross=k_spec.cross,
        notes=_padding_notes(ck, q_ids, query),
        source_share=(lambda: source_share(blocks, traces, block_args)) if "cross_attn" in names else None,
    )


def _transformed(attn: nn.Module, probe: Probe) -> Tensor:
    """f_lh(x_j) ``(H, K, dim)``: each head's value vectors through its slice of ``attn``'s output projection."""
    v = probe.trace.v[0].detach()  # (H, K, s)
    H, _, s = v.shape
    w_o = attn.unify.weight.view(attn.dim, H, s)  # head h's slice of the output projection
    return torch.einsum("hks,dhs->hkd", v, w_o.detach())


def _zeroed_outputs(block, twin_block, attn_name: str, traces: dict, block_args: tuple, layer: int, query: int, f):
    """Layer ``layer``'s output at ``query`` ``(K + 1, dim)`` as computed and with each key's value zeroed:
    a re-run of ``block`` (the model's own) from the pass's traces of ``twin_block`` (the hooked copy)."""
    attn = getattr(twin_block, attn_name)
    a = traces[(layer, attn_name)].trace.weights[0, :, query].detach()  # (H, K)
    K = a.shape[1]
    # the attention output at I as computed (row 0) and without each key's value (rows 1..K)
    total = (a[..., None] * f).sum((0, 1)) + (attn.unify.bias if attn.unify.bias is not None else 0)
    rows = torch.cat([total[None], total[None] - (a[..., None] * f).sum(0)])  # (K + 1, dim)
    replaced = {attn_name: rows.detach()[:, None]}
    if attn_name == "cross_attn":  # the self-attention before it keeps its output at I as computed
        heads = traces[(layer, "self_attn")].trace.heads[0, :, query].reshape(1, -1)  # head by head, as forward
        replaced["self_attn"] = twin_block.self_attn.unify(heads).detach().expand(K + 1, -1)[:, None]
    args = [v.detach() if isinstance(v, Tensor) else v for v in block_args]
    x = args[0][0, query].expand(K + 1, -1)[:, None]
    # a decoder block's cross-attention after a zeroed self-attention is re-run for real: one query over the
    # whole memory is exact. No self-attention mask: the one position sees only itself.
    extra = (args[1].expand(K + 1, -1, -1), None, args[3]) if hasattr(block, "cross_attn") else (None,)
    return rerun_with_outputs(block, x, replaced, *extra)[:, 0]


def _padding_notes(ck: Checkpoint, q_ids: list[int], query: int) -> list[str]:
    """What to say about the query position itself where it is padding (the assembly adds "no key")."""
    pad = getattr(ck.model.config, "pad_id", None)
    if pad is not None and q_ids[query] == pad:
        return [f"position {query} is padding: no other position reads it, so its row explains nothing"]
    return []
