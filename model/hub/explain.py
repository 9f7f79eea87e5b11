"""Explain one attention weight of a Hugging Face model from the layer's own weights.

For GPT-2, the BERT family (BERT, RoBERTa, XLM-R, CamemBERT, DistilBERT) and Marian/BART, the
weight that query i gives key j in one head is recomputed step by step: the layer's input hidden
states (``output_hidden_states=True`` on one teacher-forced pass over the run's token ids; nothing
is hooked or stored on the shared model), q_i and every k_j and v_j from the layer's own
projections, then the same steps as for our own models (:func:`model.core.explanation.row_steps`),
into the same :class:`~model.core.explanation.Explanation`.

Every other decoder-only model (Llama, Qwen2/3, Mistral, Gemma 1–3, Phi-3, OLMo2, SmolLM3: rotary,
grouped-query) is traced through transformers' ``AttentionInterface`` (:mod:`model.hub.probe`): q as
attention reads it, the k and v of the key/value head it shares, the model's own mask (causal, sliding
window), its scaling and soft-capping; and, rebuilt from the layer's input (:mod:`model.hub.rotary`),
q and k before the rotation with the angle of each pair of dimensions.

The recomputed weight is checked against the one the model reported; if they ever disagree, or the
architecture is another one (T5 adds a position bias, pre-norm BART variants normalise first),
:class:`NotExplained` says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from model.core.explanation import (
    NOT_ADDITIVE,
    Explanation,
    NotExplained,
    mask_reasons,
    position_split,
    row_steps,
    scale_text,
)
from model.core.results import RunResult
from model.hub import rotary
from model.hub.load import HubModel
from model.hub.probe import NotProbed, Trace, trace

BERT_LIKE = {"bert", "roberta", "xlm-roberta", "camembert", "distilbert"}
POST_NORM_SEQ2SEQ = {"marian", "bart"}
REASONS = {
    "t5": "T5 adds a learned relative-position bias to every score and does not scale by 1/√d",
    "mt5": "mT5 adds a learned relative-position bias to every score and does not scale by 1/√d",
    "mbart": "mBART normalises before attention, a path this view does not recompute",
    "pegasus": "Pegasus normalises before attention, a path this view does not recompute",
}
TOLERANCE = 1e-4  # float32 recomputation against the model's own weight


def _project(module: torch.nn.Module, x: torch.Tensor, part: int = 0, parts: int = 1) -> torch.Tensor:
    """``x`` through a linear layer, or through slice ``part`` of ``parts`` of a fused one. GPT-2's
    ``Conv1D`` stores its weight as (in, out), ``nn.Linear`` as (out, in)."""
    w, b = module.weight, module.bias
    if isinstance(module, torch.nn.Linear):
        w = w.t()
    size = w.shape[1] // parts
    w = w[:, part * size : (part + 1) * size]
    out = x @ w
    return out + b[part * size : (part + 1) * size] if b is not None else out


def _heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(T, E) -> (heads, T, E / heads)"""
    T, E = x.shape
    return x.view(T, heads, E // heads).transpose(0, 1)


def _attend(attn: torch.nn.Module, h: torch.Tensor, allowed: torch.Tensor, heads: int) -> torch.Tensor:
    """A BART-style attention module's whole output on ``h``, computed explicitly (no module call)."""
    q, k, v = (_heads(_project(p, h), heads) for p in (attn.q_proj, attn.k_proj, attn.v_proj))
    scores = (q @ k.transpose(1, 2)) * attn.scaling
    w = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return _project(attn.out_proj, (w @ v).transpose(0, 1).reshape(h.shape))


@dataclass
class _Site:
    """Where one kind and layer's attention reads from: query and key inputs, projections, scale."""

    x_q: torch.Tensor  # (queries, E) the input of the query projection
    x_k: torch.Tensor  # (keys, E) the input of the key and value projections
    q_proj: tuple  # (module, part, parts)
    k_proj: tuple
    v_proj: tuple
    heads: int
    scale: float
    extra: str  # why the scale is not 1/√d, in words ("" when it is)
    query_from: str  # what x_q is, in words
    key_from: str


def _site(hub: HubModel, out, kind: str, layer: int) -> _Site:
    mt, base, cfg = hub.model_type, hub.model.base_model, hub.model.config
    if mt == "gpt2":
        block = base.h[layer]
        x = block.ln_1(out.hidden_states[layer][0])  # GPT-2 normalises before attention
        attn = block.attn
        if not attn.scale_attn_weights:
            extra = " (scale_attn_weights is off)"
        else:
            extra = f" (÷ √d, then ÷ {layer + 1}, the layer)" if attn.scale_attn_by_inverse_layer_idx else ""
        where = f"layer {layer}'s input hidden states after ln_1"
        return _Site(
            x,
            x,
            (attn.c_attn, 0, 3),
            (attn.c_attn, 1, 3),
            (attn.c_attn, 2, 3),
            attn.num_heads,
            attn.scaling,
            extra,
            where,
            where,
        )
    if mt in BERT_LIKE:
        x = out.hidden_states[layer][0]
        if mt == "distilbert":
            attn = base.transformer.layer[layer].attention
            q, k, v, heads = attn.q_lin, attn.k_lin, attn.v_lin, attn.n_heads
        else:
            attn = base.encoder.layer[layer].attention.self
            q, k, v, heads = attn.query, attn.key, attn.value, attn.num_attention_heads
        where = f"layer {layer}'s input hidden states"
        return _Site(x, x, (q, 0, 1), (k, 0, 1), (v, 0, 1), heads, attn.scaling, "", where, where)
    if mt in POST_NORM_SEQ2SEQ:
        where_q = where_k = f"{kind} layer {layer}'s input hidden states"
        if kind == "encoder":
            attn = base.encoder.layers[layer].self_attn
            x_q = x_k = out.encoder_hidden_states[layer][0]
        else:
            dec = base.decoder.layers[layer]
            h = out.decoder_hidden_states[layer][0]
            if kind == "decoder":
                attn, x_q, x_k = dec.self_attn, h, h
            else:  # the cross-attention query reads the (post-norm) output of the layer's self-attention
                T = h.shape[0]
                allowed = torch.ones(T, T, dtype=torch.bool, device=h.device).tril()
                x_q = dec.self_attn_layer_norm(h + _attend(dec.self_attn, h, allowed, cfg.decoder_attention_heads))
                attn, x_k = dec.encoder_attn, out.encoder_last_hidden_state[0]
                where_q = f"decoder layer {layer}'s self-attention output (after its layer norm)"
                where_k = "the encoder's output, the same for every decoder layer"
        return _Site(
            x_q,
            x_k,
            (attn.q_proj, 0, 1),
            (attn.k_proj, 0, 1),
            (attn.v_proj, 0, 1),
            attn.num_heads,
            attn.scaling,
            "",
            where_q,
            where_k,
        )
    raise NotImplementedError(
        REASONS.get(
            mt,
            f"the step-by-step view covers GPT-2, the BERT family, Marian/BART "
            f"and decoders such as Llama, Qwen, Mistral and Gemma, not {mt}",
        )
    )


def _probed(hub: HubModel) -> bool:
    """Whether ``hub``'s cells are explained from a :func:`~model.hub.probe.trace` (decoders but GPT-2)."""
    return hub.shape == "decoder" and hub.model_type != "gpt2"


def _as64(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float64).numpy()


def _checked(steps: dict, map_weight: float) -> dict:
    """``steps``, or :class:`NotExplained` when they do not give the model's own weight."""
    if not math.isclose(steps["weight"], map_weight, abs_tol=TOLERANCE):
        raise NotExplained(
            f"recomputing gave {steps['weight']:.6f}, not the model's {map_weight:.6f}; showing the weight only"
        )
    return steps


def forward(hub: HubModel, result: RunResult, layers: set[int] | None = None):
    """One teacher-forced pass over ``result.inputs`` with hidden states and attention weights, or for a
    traced family its :class:`~model.hub.probe.Trace` of ``layers`` (all: None) (what :func:`explain`
    reads; pass it back in to explain several cells of the same run)."""
    if _probed(hub):
        try:
            return trace(hub.model, result.inputs["ids"], layers)
        except NotProbed as why:
            raise NotExplained(f"{why}; showing the weight only") from None
    ins = {k: torch.tensor([v], device=hub.device) for k, v in result.inputs.items()}
    with torch.no_grad():
        if hub.shape == "encoder-decoder":
            return hub.model(
                input_ids=ins["src"],
                attention_mask=torch.ones_like(ins["src"]),
                decoder_input_ids=ins["tgt"],
                output_attentions=True,
                output_hidden_states=True,
            )
        return hub.model(
            input_ids=ins["ids"],
            attention_mask=torch.ones_like(ins["ids"]),
            output_attentions=True,
            output_hidden_states=True,
        )


def explain(
    hub: HubModel, result: RunResult, kind: str, layer: int, head: int, query: int, key: int, *, states=None
) -> Explanation:
    """Why ``result``'s ``kind`` map gives weight w[layer, head, query, key]; ``states`` is a
    :func:`forward` of the same result, computed here when not given. :class:`NotExplained` when this
    architecture is not recomputed here, or the recomputation does not give the model's weight."""
    view = result.kinds[kind]
    if not (
        0 <= layer < view.layers
        and 0 <= head < view.heads
        and 0 <= query < len(view.queries)
        and 0 <= key < len(view.keys)
    ):
        raise IndexError(
            f"{kind}: no cell layer {layer}, head {head}, query {query}, key {key} in {tuple(view.weights.shape)}"
        )
    map_weight = float(view.weights[layer, head, query, key])
    if _probed(hub):
        tr = states if states is not None else forward(hub, result, {layer})
        return _explain_traced(hub, result, layer, head, query, key, tr, map_weight)
    try:
        site = _site(hub, states if states is not None else forward(hub, result), kind, layer)
    except NotImplementedError as why:
        raise NotExplained(f"{why}; showing the weight only") from None
    with torch.no_grad():
        q = _heads(_project(site.q_proj[0], site.x_q[query : query + 1], *site.q_proj[1:]), site.heads)[head, 0]
        K = _heads(_project(site.k_proj[0], site.x_k, *site.k_proj[1:]), site.heads)[head]
        V = _heads(_project(site.v_proj[0], site.x_k, *site.v_proj[1:]), site.heads)[head]
    mask = np.asarray(view.mask[query], dtype=bool)
    steps = _checked(row_steps(_as64(q), _as64(K), _as64(V), mask, float(site.scale), key), map_weight)
    d = q.shape[-1]
    causal = kind == "decoder"
    return Explanation(
        model=hub.source,
        kind=kind,
        layer=layer,
        head=head,
        query=query,
        key=key,
        query_tokens=list(view.queries),
        key_tokens=list(view.keys),
        query_from=f"position {query}: {site.query_from}",
        key_from=f"position {key}: {site.key_from}",
        dim=site.x_q.shape[-1],
        heads=site.heads,
        head_dim=d,
        query_input=_as64(site.x_q[query]),
        key_input=None if site.x_k is site.x_q else _as64(site.x_k[key]),
        scale_text=scale_text(d, scale=float(site.scale), extra=site.extra),
        mask_reasons=mask_reasons(mask, query, causal=causal),
        map_weight=map_weight,
        **_why_this_weight(hub, result, kind, layer, head, query, key, float(steps["score"])),
        **steps,
    )


def _why_this_weight(hub: HubModel, result: RunResult, kind: str, layer: int, head: int, i: int, j: int, score: float):
    """``position_split`` at layer 0 of GPT-2 (token + learned position, then ln_1) and the BERT family
    (word + segment 0 as the token, + learned position, then the embeddings' LayerNorm), checked against the
    score; else the ``position_note``."""
    mt, base = hub.model_type, hub.model.base_model
    if layer != 0 or kind == "cross":
        return {"position_note": "only layer 0's self-attention reads the embeddings directly"}
    ids = result.inputs.get("ids")
    as64 = lambda t: None if t is None else t.detach().to("cpu", torch.float64).numpy()  # noqa: E731
    if mt == "gpt2":
        tok, pos, block = base.wte.weight, base.wpe.weight, base.h[0]
        norm, attn, E = block.ln_1, block.attn, base.wte.weight.shape[1]
        s = E // attn.num_heads
        w, b = attn.c_attn.weight, attn.c_attn.bias  # Conv1D: (in, 3E) = q | k | v
        cols_q, cols_k = slice(head * s, (head + 1) * s), slice(E + head * s, E + (head + 1) * s)
        proj = (w[:, cols_q].t(), b[cols_q], w[:, cols_k].t(), b[cols_k])
        token = lambda t: tok[ids[t]]  # noqa: E731
        offset, scale = 0, attn.scaling
    elif mt in ("bert", "distilbert"):
        emb = base.embeddings
        attn = base.transformer.layer[0].attention if mt == "distilbert" else base.encoder.layer[0].attention.self
        q, k = (attn.q_lin, attn.k_lin) if mt == "distilbert" else (attn.query, attn.key)
        s = q.weight.shape[0] // (attn.n_heads if mt == "distilbert" else attn.num_attention_heads)
        rows = slice(head * s, (head + 1) * s)
        proj = (q.weight[rows], q.bias[rows], k.weight[rows], k.bias[rows])
        segment = getattr(emb, "token_type_embeddings", None)
        token = lambda t: emb.word_embeddings.weight[ids[t]] + (0 if segment is None else segment.weight[0])  # noqa: E731
        pos, norm, offset, scale = emb.position_embeddings.weight, emb.LayerNorm, 0, 1 / s**0.5
    else:
        return {"position_note": f"the token/position split covers layer 0 of GPT-2, BERT and DistilBERT, not {mt}"}
    split = position_split(
        as64(token(i)),
        as64(pos[i + offset]),
        as64(token(j)),
        as64(pos[j + offset]),
        *(as64(t) for t in proj),
        float(scale),
        (as64(norm.weight), as64(norm.bias), norm.eps),
    )
    if not math.isclose(sum(split.values()), score, rel_tol=1e-4, abs_tol=1e-5):
        return {"position_note": "the token and position parts do not add up to this score here: not shown"}
    return {"position_split": split}


def _visible(mask: torch.Tensor | None, query: int, keys: int) -> np.ndarray:
    """Which keys the query row of an additive mask lets through; :class:`NotExplained` for a mask that
    adds anything but 0 or "never" (a position bias the steps would not show)."""
    if mask is None:
        return np.ones(keys, dtype=bool)
    row = mask[query].to(torch.float64)
    visible, hidden = row == 0, row <= torch.finfo(mask.dtype).min / 2
    if not bool((visible | hidden).all()):
        raise NotExplained(
            "its attention mask adds a bias to the scores, which these steps do not show; showing the weight only"
        )
    return visible.cpu().numpy()


def _rotation(hub: HubModel, tr: Trace, layer: int, head: int, kv: int, query: int, key: int) -> dict:
    """The Explanation fields of q and k before the rotation, rebuilt from the layer's input and checked
    against the traced q and k; the notes say why fields are left out."""
    call = tr.calls[layer]
    before = rotary.before_rotation(hub.model, layer, tr.hidden_states[layer])
    if before is None:
        return {"notes": " (q and k before the rotation are not rebuilt for this layout)"}
    fields = {"query_input": _as64(before.x[query]), "norm": before.norm, "source": before.source, "notes": ""}
    q0, k0 = _as64(before.query[head, query]), _as64(before.key[kv, key])
    q, k = _as64(call.query[head, query]), _as64(call.key[kv, key])
    turn = rotary.angles(hub.model, layer, before.x) if rotary.rotates(hub.model, layer) else None
    if turn is None:
        if np.allclose(q0, q, atol=TOLERANCE) and np.allclose(k0, k, atol=TOLERANCE):
            return {**fields, "notes": " (this layer adds no rotary position: NoPE)"}
        return {**fields, "notes": " (q and k before the rotation are not rebuilt for this layout)"}
    theta, scale = turn
    if not (
        np.allclose(rotary.rotate(q0, theta[query], scale), q, atol=TOLERANCE)
        and np.allclose(rotary.rotate(k0, theta[key], scale), k, atol=TOLERANCE)
    ):
        return {**fields, "notes": " (q and k before the rotation could not be rebuilt for this layer)"}
    return {
        **fields,
        "q_unrotated": q0,
        "k_unrotated": k0,
        "query_angles": theta[query],
        "key_angles": theta[key],
        "rotary_scale": scale,
    }


def _explain_traced(
    hub: HubModel, result: RunResult, layer: int, head: int, query: int, key: int, tr: Trace, map_weight: float
) -> Explanation:
    """A decoder cell from the traced call of its layer (:mod:`model.hub.probe`)."""
    if not isinstance(tr, Trace) or layer not in tr.calls:
        raise NotExplained(f"layer {layer}'s attention was not traced; showing the weight only")
    view, call = result.kinds["decoder"], tr.calls[layer]
    heads, s = call.query.shape[0], call.query.shape[-1]
    kv = head // call.groups  # grouped-query attention: consecutive query heads share one key/value head
    visible = _visible(call.mask, query, call.key.shape[1])
    steps = row_steps(
        _as64(call.query[head, query]),
        _as64(call.key[kv]),
        _as64(call.value[kv]),
        visible,
        call.scaling,
        key,
        softcap=call.softcap,
    )
    steps = _checked(steps, map_weight)
    rot = _rotation(hub, tr, layer, head, kv, query, key)
    source = rot.pop("source", f"layer {layer}'s input hidden states") + rot.pop("notes")
    pre = getattr(hub.model.config, "query_pre_attn_scalar", None)
    extra = (
        f" (1/√{pre:g}: query_pre_attn_scalar, not the head width)"
        if pre and math.isclose(call.scaling, pre**-0.5, rel_tol=1e-6)
        else ""
    )
    return Explanation(
        model=hub.source,
        kind="decoder",
        layer=layer,
        head=head,
        query=query,
        key=key,
        query_tokens=list(view.queries),
        key_tokens=list(view.keys),
        query_from=f"position {query}: {source}",
        key_from=f"position {key}: {source}",
        dim=tr.hidden_states[layer].shape[-1],
        heads=heads,
        head_dim=s,
        query_input=rot.pop("query_input", _as64(tr.hidden_states[layer][query])),
        key_input=None,
        scale_text=scale_text(s, scale=call.scaling, extra=extra),
        mask_reasons=mask_reasons(visible, query, causal=True, window=call.sliding_window),
        map_weight=map_weight,
        model_output=_as64(call.output[query, head]),
        kv_head=kv,
        kv_heads=call.key.shape[0],
        softcap=call.softcap,
        sliding_window=call.sliding_window,
        position_note=NOT_ADDITIVE if "q_unrotated" in rot else "this model adds no absolute position to split off",
        **rot,
        **steps,
    )
