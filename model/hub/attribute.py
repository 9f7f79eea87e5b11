"""Contributions beside attention for a Hugging Face model: its :class:`~model.analysis.contributions.Sources`,
obtained through transformers' own ``AttentionInterface`` and assembled by
:func:`model.analysis.contributions.assemble`, as our own models' are (the measures, their formulas and
papers are there).

One pass over the run's ids, with gradients, on a *shadow* of the model (a copy of its module tree sharing
every parameter, whose config names :func:`attribute_attention`; the model every session shares is not
touched) records what each attention call received and returned: the value vectors (after their bias,
per key/value head) and the per-head output before the output projection. The weights are the pass's own
``output_attentions``, so gradient × attention differentiates the score through the very tensors the
outputs were computed from. The norm reads each layer's output projection (``o_proj``, ``out_proj``,
GPT-2's ``c_proj``, DistilBERT's ``out_lin``, BERT's ``attention.output.dense``).

Value zeroing re-runs layer l alone on one position, I, in one batch of K + 1: the attention function
returns the output as computed and, for each key j, the output without j's value term
(Σ over the row minus a[h,I,j] · v[h,j]); the layer's own output projection, norms, residuals and
feed-forward do the rest. An encoder-decoder's cross-attention after a zeroed decoder self-attention runs
for real (one query over the whole encoder output is exact). The re-run is checked against the pass's own
``hidden_states[l + 1]``; where a family cannot be re-run this way value zeroing is absent, with the reason.
"""

from __future__ import annotations

import inspect
import re
import sys
from contextvars import ContextVar

import numpy as np
import torch

from model.analysis.contributions import Attribution, Sources, alti, assemble, shadow
from model.core.results import RunResult
from model.hub.explain import POST_NORM_SEQ2SEQ
from model.hub.load import HubModel

NAME = "attention_explorer_attribute"
OUT_PROJECTIONS = ("o_proj", "out_proj", "c_proj", "out_lin", "o")
TOLERANCE = 1e-4  # the one-position re-run against the full pass (float32)

# (calls recorded in order, outputs to return in order instead of attending: None = attend for real)
_state: ContextVar[tuple[list, list | None] | None] = ContextVar("attention_attribute", default=None)


def attribute_attention(module, query, key, value, attention_mask, **kwargs):
    """An ``ALL_ATTENTION_FUNCTIONS`` entry: the family's eager attention, its value and output recorded;
    or, during a value-zeroing re-run, the output it is handed."""
    state = _state.get()
    if state is not None and state[1]:
        given = state[1].pop(0)
        if given is not None:
            return given, None
    eager = getattr(sys.modules[type(module).__module__], "eager_attention_forward", None)
    if eager is None:
        raise NotImplementedError(f"{type(module).__name__} has no eager attention function to record")
    output, weights = eager(module, query, key, value, attention_mask, **kwargs)
    if state is not None:
        state[0].append((module, value[0], output[0]))
    return output, weights


def _twin(model: torch.nn.Module) -> torch.nn.Module:
    from transformers.masking_utils import AttentionMaskInterface, eager_mask
    from transformers.modeling_utils import AttentionInterface

    AttentionInterface.register(NAME, attribute_attention)
    AttentionMaskInterface.register(NAME, eager_mask)
    twin = shadow(model)
    for m in twin.modules():  # the copy's own configs (the model's stay "eager"), sub-configs included
        config = getattr(m, "config", None)
        if config is not None and hasattr(config, "_attn_implementation"):
            config._attn_implementation = NAME
    return twin


def _score(hub: HubModel, out, kind: str, query: int, ids: list[int]) -> tuple[torch.Tensor | None, str]:
    """The score the page shows (see :func:`model.analysis.attribute.score_of`), or None and why not."""
    output = hub.spec.output
    if not output:
        return None, hub.missing_note or "the model has no prediction head, so there is no score to differentiate"
    logits = out.logits[0]
    if output == "classes":
        c = int(logits.argmax())
        return logits[c], f"the logit of the predicted class {hub.model.config.id2label.get(c, c)!r}"
    if output == "masked":
        masks = [i for i, t in enumerate(ids) if t == hub.tokenizer.mask_token_id]
        if not masks:
            return None, f"put {hub.tokenizer.mask_token} in the text: the score is the masked token's logit"
        return logits[masks[0]].max(), f"the logit of the top guess at the mask (position {masks[0]})"
    if output == "next":
        return logits[-1].max(), "the logit of the predicted next token"
    best = logits.max(-1).values
    if kind == "encoder":
        return best.sum(), "the sum of the logits of every token written (teacher-forced)"
    return best[query], f"the logit of the token written at position {query}"


def _out_projection(twin: torch.nn.Module, module: torch.nn.Module) -> torch.Tensor:
    """The attention's output projection as a (heads · s, dim) matrix acting on the concatenated heads."""
    proj = next(
        (getattr(module, n) for n in OUT_PROJECTIONS if isinstance(getattr(module, n, None), torch.nn.Module)), None
    )
    if proj is None:  # BERT-like: the projection sits beside the attention, in its parent's output
        name = next(n for n, m in twin.named_modules() if m is module)
        proj = twin.get_submodule(name.rsplit(".", 1)[0]).output.dense
    return proj.weight.t() if isinstance(proj, torch.nn.Linear) else proj.weight  # GPT-2's Conv1D is (in, out)


def _layer_of(twin: torch.nn.Module, module: torch.nn.Module) -> torch.nn.Module:
    """The layer (an item of a ModuleList) holding ``module``."""
    name = next(n for n, m in twin.named_modules() if m is module)
    prefix = re.match(r"(.*?\.\d+)(\.|$)", name)
    return twin.get_submodule(prefix.group(1))


def _forward(hub: HubModel, twin, result: RunResult):
    ins = {k: torch.tensor([v], device=hub.device) for k, v in result.inputs.items()}
    if hub.shape == "encoder-decoder":
        return twin(
            input_ids=ins["src"],
            attention_mask=torch.ones_like(ins["src"]),
            decoder_input_ids=ins["tgt"],
            output_attentions=True,
            output_hidden_states=True,
        )
    # a next-token score reads only the last position's logits: projecting the others to the vocabulary
    # (and back, for the gradient) is an eighth of a GPT-2-small pass spent on nothing
    keep = {"logits_to_keep": 1} if hub.spec.output == "next" else {}
    return twin(
        input_ids=ins["ids"],
        attention_mask=torch.ones_like(ins["ids"]),
        output_attentions=True,
        output_hidden_states=True,
        **keep,
    )


def _kind_tensors(hub: HubModel, out, calls: list, kind: str):
    """(weights per layer, calls per layer, hidden states entering each layer) of ``kind``."""
    if hub.shape != "encoder-decoder":
        return list(out.attentions), calls, out.hidden_states
    enc = len(out.encoder_attentions)
    if kind == "encoder":
        return list(out.encoder_attentions), calls[:enc], out.encoder_hidden_states
    decoder = calls[enc:]
    picked = decoder[0::2] if kind == "decoder" else decoder[1::2]
    weights = out.decoder_attentions if kind == "decoder" else out.cross_attentions
    return list(weights), picked, out.decoder_hidden_states


def _rerun(hub, twin, layer_module, layer: int, x, given: list, memory=None) -> torch.Tensor:
    """``layer_module`` (layer ``layer``) on ``x`` ``(N, 1, dim)`` with its attention calls answered by
    ``given`` in order."""
    kwargs = {}
    rotary = getattr(twin.base_model, "rotary_emb", None)
    if rotary is not None:  # rotated q and k are never read (every output is given) but must have a shape
        position = torch.zeros(1, 1, dtype=torch.long, device=x.device)
        types = getattr(hub.model.config, "layer_types", None)
        # Gemma 3 keeps one rotation per layer type (local, global) and asks which
        extra = (types[layer],) if types and "layer_type" in inspect.signature(rotary.forward).parameters else ()
        kwargs["position_embeddings"] = rotary(x, position, *extra)
    if memory is not None:
        kwargs["encoder_hidden_states"] = memory
    token = _state.set(([], list(given)))
    try:
        with torch.no_grad():
            out = layer_module(x, attention_mask=None, **kwargs)
    finally:
        _state.reset(token)
    return out[0] if isinstance(out, tuple) else out


def attribute(hub: HubModel, result: RunResult, kind: str, query: int) -> Attribution:
    """Every method for query ``query`` of ``result``'s ``kind`` attention (``result`` is a run of ``hub``)."""
    return assemble(sources(hub, result, kind, query))


def sources(hub: HubModel, result: RunResult, kind: str, query: int) -> Sources:
    """What :func:`attribute` assembles: one recorded pass of a shadow of ``hub``'s model (module docstring)."""
    if kind not in result.kinds:
        raise ValueError(f"this model has no {kind!r} attention; choose one of {', '.join(result.kinds)}")
    view = result.kinds[kind]
    if not 0 <= query < len(view.queries):
        raise ValueError(f"query {query} is outside the input: choose 0..{len(view.queries) - 1}")
    twin = _twin(hub.model)
    calls: list = []
    residuals = _record_cross_inputs(hub, twin)
    token = _state.set((calls, None))
    try:
        with torch.enable_grad():
            out = _forward(hub, twin, result)
    finally:
        _state.reset(token)
    residuals = list(residuals)  # the pass's own; value zeroing's re-runs go through the hooks again
    weights, layer_calls, hidden = _kind_tensors(hub, out, calls, kind)
    transformed = []
    for w, (module, value, _) in zip(weights, layer_calls):
        H, s = w.shape[1], value.shape[-1]
        v = value.detach().repeat_interleave(H // value.shape[0], dim=0)  # (H, K, s): each query head's kv head
        w_o = _out_projection(twin, module).detach().view(H, s, -1)
        transformed.append(torch.einsum("hks,hsd->hkd", v, w_o))  # f_lh(x_j)

    def zeroed(l: int) -> torch.Tensor:
        return _zeroed_outputs(hub, twin, out, calls, kind, query, l, weights[l], layer_calls[l], hidden)

    ids = result.inputs.get("ids", result.inputs.get("src", []))
    score, score_text = _score(hub, out, kind, query, ids)
    share = None
    if hub.shape == "encoder-decoder" and kind != "encoder":
        if residuals:
            cross_calls = calls[len(out.encoder_attentions) :][1::2]
            share = lambda: _source_share(twin, cross_calls, out.cross_attentions, residuals)
        else:
            share = f"the source share is computed for the post-norm Marian and BART, not {hub.model_type}"
    return Sources(
        model=hub.source,
        kind=kind,
        query=query,
        query_tokens=list(view.queries),
        key_tokens=list(view.keys),
        visible=np.asarray(view.mask[query], dtype=bool),
        weights=weights,
        transformed=transformed,
        zeroed=zeroed,
        score=score,
        score_text=score_text,
        cross=view.cross,
        zeroing_failure=f"a {kind} layer could not be re-run alone for {hub.model_type}",
        source_share=share,
    )


def _record_cross_inputs(hub: HubModel, twin: torch.nn.Module) -> list:
    """For the post-norm encoder-decoders (Marian, BART), hooks on the copy's cross-attention modules that
    keep, in call order, the hidden states each reads: the residual stream the sublayer adds to."""
    if hub.model_type not in POST_NORM_SEQ2SEQ:
        return []
    kept: list = []

    def keep(module, args, kwargs):
        kept.append((args[0] if args else kwargs["hidden_states"])[0].detach())

    for name, m in twin.named_modules():
        if name.endswith("encoder_attn"):
            m.register_forward_pre_hook(keep, with_kwargs=True)
    return kept


def _source_share(twin, cross_calls: list, weights, residuals: list) -> torch.Tensor:
    """``(L, T)`` the source's ALTI share of each word's cross-attention sublayer output (see
    :func:`model.analysis.attribute.source_share`, the same definition): parts are the residual and, per
    source word, Σ_h a · f_h(m_j) through the layer's output projection; its bias stays in no part."""
    rows = []
    for (module, value, _), w, r in zip(cross_calls, weights, residuals):
        a = w[0].detach()  # (H, T, S)
        H = a.shape[0]
        v = value.detach().repeat_interleave(H // value.shape[0], dim=0)  # (H, S, s)
        w_o = _out_projection(twin, module).detach().view(H, v.shape[-1], -1)
        from_source = torch.einsum("hts,hsd->tsd", a, torch.einsum("hks,hsd->hkd", v, w_o))
        proj = next(
            getattr(module, n) for n in OUT_PROJECTIONS if isinstance(getattr(module, n, None), torch.nn.Module)
        )
        bias = proj.bias.detach() if getattr(proj, "bias", None) is not None else 0
        y = r + from_source.sum(1) + bias
        rows.append(alti(torch.cat([r[:, None], from_source], dim=1), y)[:, 1:].sum(-1))
    return torch.stack(rows)


def _zeroed_outputs(hub, twin, out, calls, kind, query, l, w, call, hidden) -> torch.Tensor:
    """``(K + 1, dim)``: layer ``l`` re-run on position I as computed and with each key's value zeroed
    (module docstring), checked against the pass's own output where there is one to check it by."""
    enc = len(out.encoder_attentions) if hub.shape == "encoder-decoder" else 0
    module, value, output = call
    a = w[0, :, query].detach()
    H, K = a.shape
    v = value.detach().repeat_interleave(H // value.shape[0], dim=0)  # (H, K, s)
    full = output[query].detach()  # (H, s) as computed
    without = full[None] - a.t()[..., None] * v.transpose(0, 1)  # (K, H, s): minus a[h,I,j] v[h,j]
    given_rows = torch.cat([full[None], without])[:, None]  # (K + 1, 1, H, s)
    x = hidden[l][0, query].detach().expand(K + 1, -1)[:, None]
    memory, given = None, [given_rows]
    if hub.shape == "encoder-decoder" and kind != "encoder":
        memory = out.encoder_last_hidden_state.detach().expand(K + 1, -1, -1)
        if kind == "cross":  # the decoder self-attention before it keeps its output at I
            self_output = calls[enc:][0::2][l][2][query].detach()
            given = [self_output[None, None].expand(K + 1, -1, -1, -1), given_rows]
        else:
            given = [given_rows, None]  # then the cross-attention runs for real
    result = _rerun(hub, twin, _layer_of(twin, module), l, x, given, memory)[:, 0]
    if l + 1 < len(hidden) - 1:  # the last entry may come after a final norm: nothing to check it by
        expected = hidden[l + 1][0, query].detach()
        if not torch.allclose(result[0], expected, atol=TOLERANCE * max(1.0, float(expected.abs().max()))):
            raise ValueError(f"re-running layer {l} on one position does not give its output")
    return result
