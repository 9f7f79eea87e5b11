"""Explain one attention weight of a Hugging Face model from the layer's own weights.

For GPT-2, the BERT family (BERT, RoBERTa, XLM-R, CamemBERT, DistilBERT) and Marian/BART, the
weight that query i gives key j in one head is recomputed step by step: the layer's input hidden
states (``output_hidden_states=True`` on one teacher-forced pass over the run's token ids; nothing
is hooked or stored on the shared model), q_i and every k_j from the layer's own projections, their
product and its sum, the scaling, the mask, and the softmax of the row. The recomputed weight is
checked against the one the model reported; if they ever disagree, or the architecture is another
one (T5 adds a position bias, pre-norm BART variants normalise first), only the weight is shown,
with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from model.core.results import RunResult
from model.hub.load import HubModel

BERT_LIKE = {"bert", "roberta", "xlm-roberta", "camembert", "distilbert"}
POST_NORM_SEQ2SEQ = {"marian", "bart"}
REASONS = {
    "t5": "T5 adds a learned relative-position bias to every score and does not scale by 1/√d",
    "mt5": "mT5 adds a learned relative-position bias to every score and does not scale by 1/√d",
    "mbart": "mBART normalises before attention, a path this view does not recompute",
    "pegasus": "Pegasus normalises before attention, a path this view does not recompute",
}
TOLERANCE = 1e-4  # float32 recomputation against the model's own weight


@dataclass(frozen=True, eq=False)
class HubExplanation:
    """How one weight came about. Without ``explained`` only the identifying fields and ``weight``
    are set, and ``reason`` says why."""

    kind: str  # "encoder", "decoder" or "cross"
    layer: int
    head: int
    query: int  # query position i
    key: int  # key position j
    query_token: str
    key_token: str
    weight: float  # what the model reported (output_attentions)
    explained: bool
    reason: str = ""
    q: np.ndarray | None = None  # (d_head,) q_i
    k: np.ndarray | None = None  # (d_head,) k_j
    product: np.ndarray | None = None  # q_i * k_j, element by element
    raw: float | None = None  # their sum: q_i · k_j
    scale: float | None = None  # what the score is multiplied by
    scale_text: str = ""  # "1/√8"
    scaled: float | None = None  # raw × scale
    mask: np.ndarray | None = None  # (keys,) True where query i may attend
    scores: np.ndarray | None = None  # (keys,) the scaled scores of row i, -inf where masked
    softmax: np.ndarray | None = None  # (keys,) softmax of that row: the weights of row i
    recomputed: float | None = None  # softmax[j], equal to ``weight``


def _project(module: torch.nn.Module, x: torch.Tensor, part: int = 0, parts: int = 1) -> torch.Tensor:
    """``x`` through a linear layer, or through slice ``part`` of ``parts`` of a fused one. GPT-2's
    ``Conv1D`` stores its weight as (in, out), ``nn.Linear`` as (out, in)."""
    w, b = module.weight, module.bias
    if isinstance(module, torch.nn.Linear):
        w = w.t()
    size = w.shape[1] // parts
    w = w[:, part * size:(part + 1) * size]
    out = x @ w
    return out + b[part * size:(part + 1) * size] if b is not None else out


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
    x_k: torch.Tensor  # (keys, E)
    q_proj: tuple  # (module, part, parts)
    k_proj: tuple
    heads: int
    scale: float
    scale_text: str


def _scale_text(d: int, extra: str = "") -> str:
    return f"1/√{d}{extra}"


def _site(hub: HubModel, out, kind: str, layer: int) -> _Site:
    mt, base, cfg = hub.model_type, hub.model.base_model, hub.model.config
    if mt == "gpt2":
        block = base.h[layer]
        x = block.ln_1(out.hidden_states[layer][0])  # GPT-2 normalises before attention
        attn = block.attn
        d = attn.head_dim
        if not attn.scale_attn_weights:
            text = "1 (scale_attn_weights is off)"
        else:
            text = _scale_text(d, f" ÷ {layer + 1} (layer)" if attn.scale_attn_by_inverse_layer_idx else "")
        return _Site(x, x, (attn.c_attn, 0, 3), (attn.c_attn, 1, 3), attn.num_heads, attn.scaling, text)
    if mt in BERT_LIKE:
        x = out.hidden_states[layer][0]
        if mt == "distilbert":
            attn = base.transformer.layer[layer].attention
            q, k, heads, d = attn.q_lin, attn.k_lin, attn.n_heads, attn.attention_head_size
        else:
            attn = base.encoder.layer[layer].attention.self
            q, k, heads, d = attn.query, attn.key, attn.num_attention_heads, attn.attention_head_size
        return _Site(x, x, (q, 0, 1), (k, 0, 1), heads, attn.scaling, _scale_text(d))
    if mt in POST_NORM_SEQ2SEQ:
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
        return _Site(x_q, x_k, (attn.q_proj, 0, 1), (attn.k_proj, 0, 1), attn.num_heads, attn.scaling,
                     _scale_text(attn.head_dim))
    raise NotImplementedError(REASONS.get(mt, f"the step-by-step view covers GPT-2, the BERT family and Marian/BART, "
                                              f"not {mt}"))


def forward(hub: HubModel, result: RunResult):
    """One teacher-forced pass over ``result.inputs`` with hidden states and attention weights (what
    :func:`explain` reads; pass it back in to explain several cells of the same run)."""
    ins = {k: torch.tensor([v], device=hub.device) for k, v in result.inputs.items()}
    with torch.no_grad():
        if hub.shape == "encoder-decoder":
            return hub.model(input_ids=ins["src"], attention_mask=torch.ones_like(ins["src"]),
                             decoder_input_ids=ins["tgt"], output_attentions=True, output_hidden_states=True)
        return hub.model(input_ids=ins["ids"], attention_mask=torch.ones_like(ins["ids"]), output_attentions=True,
                         output_hidden_states=True)


def explain(hub: HubModel, result: RunResult, kind: str, layer: int, head: int, query: int, key: int, *,
            states=None) -> HubExplanation:
    """Why ``result``'s ``kind`` map gives weight w[layer, head, query, key]; ``states`` is a
    :func:`forward` of the same result, computed here when not given."""
    view = result.kinds[kind]
    if not (0 <= layer < view.layers and 0 <= head < view.heads and 0 <= query < len(view.queries)
            and 0 <= key < len(view.keys)):
        raise IndexError(f"{kind}: no cell layer {layer}, head {head}, query {query}, key {key} in "
                         f"{tuple(view.weights.shape)}")
    plain = dict(kind=kind, layer=layer, head=head, query=query, key=key, query_token=view.queries[query],
                 key_token=view.keys[key], weight=float(view.weights[layer, head, query, key]))
    try:
        site = _site(hub, states if states is not None else forward(hub, result), kind, layer)
    except NotImplementedError as why:
        return HubExplanation(**plain, explained=False, reason=f"{why}; showing the weight only")
    with torch.no_grad():
        q = _heads(_project(site.q_proj[0], site.x_q[query:query + 1], *site.q_proj[1:]), site.heads)[head, 0]
        k = _heads(_project(site.k_proj[0], site.x_k, *site.k_proj[1:]), site.heads)[head]
        raw_row = k @ q
    allowed = torch.as_tensor(view.mask[query], device=raw_row.device)
    scores = (raw_row * site.scale).masked_fill(~allowed, float("-inf"))
    soft = torch.softmax(scores, dim=-1)
    recomputed = float(soft[key])
    if not math.isclose(recomputed, plain["weight"], abs_tol=TOLERANCE):
        return HubExplanation(**plain, explained=False, reason=(
            f"recomputing gave {recomputed:.6f}, not the model's {plain['weight']:.6f}; showing the weight only"))
    qn, kn = q.float().cpu().numpy(), k[key].float().cpu().numpy()
    return HubExplanation(
        **plain, explained=True, q=qn, k=kn, product=qn * kn, raw=float(raw_row[key]), scale=float(site.scale),
        scale_text=site.scale_text, scaled=float(raw_row[key] * site.scale), mask=view.mask[query].copy(),
        scores=scores.float().cpu().numpy(), softmax=soft.float().cpu().numpy(), recomputed=recomputed)
