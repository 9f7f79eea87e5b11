"""Did attention matter? For one query token, what each key contributed, by five measures side by side.

For the query position I of one kind of attention, every layer l, head h and key j (the same row the
explorer shows):

- ``attention``: a[l,h,I,j], the map's own weight.
- ``norm`` (Kobayashi et al. 2020, "Attention is Not Only a Weight"): ‖a[l,h,I,j] · f_lh(x_j)‖ with
  f_lh(x) = (x W_V^lh + b_V^lh) W_O^lh, x being the layer's attention input after its pre-norm where it
  has one; W_O^lh is head h's slice of the output projection (its bias, shared by every key, left out).
  ``norm_layer`` = ‖Σ_h a[l,h,I,j] · f_lh(x_j)‖, the heads summed before the norm.
- ``value_zeroing`` (Mohebbi et al. 2023, "Quantifying Context Mixing in Transformers"): the cosine
  distance between layer l's output at I (the block's output: transformers' ``hidden_states[l + 1]``)
  as computed and with token j's value vector zeroed in every head of layer l, normalised to sum 1 over j.
- ``rollout`` (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): row I of
  Π_{l' ≤ l} (0.5 · mean_h A_l' + 0.5 · Id) for every l (:func:`model.analysis.maps.attention_rollout`);
  the last layer's row is the whole product. Self-attention only.
- ``grad_attention``: a ⊙ ∂s/∂a, s being the score the page shows (:func:`score_of`); absent where the
  model predicts nothing.

Value zeroing needs only layer l's output at I: a value vector enters that output through the
attention row of I alone, so the block is re-run on a one-position sequence, position I's residual
input, with its attention output replaced by the K + 1 versions (as computed; without each key's value,
Σ_h unify(a[h,I,·] v[h,·]) minus that key's term), all in one batch: K small re-runs per layer instead
of K full passes. The block's own code does the norms, residuals and feed-forward; nothing of the shared
model changes (the re-run uses a copy of the block whose attention modules return the given outputs).
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor, nn

from model.analysis.explain import _input_tensors
from model.analysis.maps import attention_rollout
from model.core.checkpoint import Checkpoint
from model.core.results import AttentionKind
from model.nets.attention import Probe

METHODS = ("attention", "norm", "norm_layer", "value_zeroing", "rollout", "grad_attention")
# the per-layer measures the disagreement sentence compares with attention, as it names them
CONTRIBUTIONS = {"norm_layer": "norm-based", "value_zeroing": "value-zeroing", "grad_attention": "gradient × attention"}


@dataclass(frozen=True, eq=False)
class Attribution:
    """One query row's contributions by every method; arrays are float64, shaped as :data:`METHODS` say:
    ``attention``, ``norm``, ``grad_attention`` ``(L, H, K)``; ``norm_layer``, ``value_zeroing``,
    ``rollout`` ``(L, K)``."""

    model: str
    kind: str
    query: int
    query_tokens: list[str]
    key_tokens: list[str]
    visible: np.ndarray  # (K,) bool: the keys the query may attend to
    methods: dict[str, np.ndarray]
    absent: dict[str, str] = field(default_factory=dict)  # method -> why it is not shown
    score: str = ""  # what grad_attention differentiates, in words
    notes: list[str] = field(default_factory=list)  # about the query position (padding, nothing visible)
    # encoder-decoders: (L, output words) the share of each word's cross-attention sublayer output that came
    # from the source rather than from the words already written (:func:`source_share`); None otherwise
    source_share: np.ndarray | None = None

    @property
    def query_token(self) -> str:
        return self.query_tokens[self.query]

    def layer_rows(self, method: str) -> np.ndarray:
        """``(L, K)`` one row per layer: per-head measures averaged over heads (attention, grad) or
        summed in absolute value (norm), layer measures as they are."""
        m = self.methods[method]
        if m.ndim == 2:
            return m
        return np.abs(m).sum(1) if method == "norm" else m.mean(1)

    def shares_at(self, layer: int) -> dict[str, np.ndarray]:
        """Each method's row at ``layer`` as shares of the row (absolute values summing to 1), by name,
        in :data:`METHODS` order: what the panel draws side by side. Rollout's row is the product up to
        ``layer``; ``norm`` (per head) is left out beside ``norm_layer``."""
        return {
            m: _shares(self.layer_rows(m)[layer : layer + 1])[0] for m in METHODS if m in self.methods and m != "norm"
        }

    @property
    def layers(self) -> int:
        return len(self.methods["attention"])

    @property
    def agreement(self) -> dict[str, float]:
        """Spearman's rank correlation (ties ranked by their mean) between each method's row and the
        head-averaged attention row of the same layer, over the visible keys, averaged over layers;
        NaN where a layer's row is constant."""
        att, v = self.layer_rows("attention"), self.visible
        out = {}
        for name in self.methods:
            if name == "attention":
                continue
            rows = self.layer_rows(name)
            out[name] = float(np.nanmean([spearman(att[l, v], rows[l, v]) for l in range(len(rows))]))
        return out

    @property
    def disagreement(self) -> str:
        """Where attention and a contribution differ most, in one sentence: the layer, key and method with
        the largest gap between their shares of the row (each normalised to sum 1 over the keys)."""
        att = _shares(self.layer_rows("attention"))
        best = None
        for name, label in CONTRIBUTIONS.items():
            if name not in self.methods:
                continue
            gap = np.abs(att - _shares(self.layer_rows(name)))
            gap[:, ~self.visible] = -1
            layer, key = np.unravel_index(int(gap.argmax()), gap.shape)
            if best is None or gap[layer, key] > best[0]:
                best = (gap[layer, key], name, label, int(layer), int(key))
        if best is None or best[0] <= 0:
            return "Attention and the contributions agree on every key."
        _, name, label, layer, key = best
        c = _shares(self.layer_rows(name))[layer, key]
        return (
            f"In layer {layer}, {self.key_tokens[key]!r} (key {key}) takes {att[layer, key]:.0%} of the "
            f"attention and {c:.0%} of the {label} contribution."
        )

    def to_json(self) -> dict:
        """The command line's shape: tokens, query and every method as nested lists (null when absent)."""
        return {
            "model": self.model,
            "kind": self.kind,
            "tokens": self.key_tokens,
            "query_tokens": self.query_tokens,
            "query": self.query,
            "methods": {m: self.methods[m].tolist() if m in self.methods else None for m in METHODS},
            "absent": self.absent,
            "score": self.score,
            "agreement": {k: (None if v != v else round(v, 4)) for k, v in self.agreement.items()},
            "agreement_measure": "Spearman rank correlation with attention, visible keys, mean over layers",
            "disagreement": self.disagreement,
            "notes": self.notes,
            "source_share": None if self.source_share is None else self.source_share.tolist(),
        }


def _shares(rows: np.ndarray) -> np.ndarray:
    """Each row's absolute values divided by their sum (zero rows stay zero)."""
    a = np.abs(rows)
    total = a.sum(-1, keepdims=True)
    return np.divide(a, total, out=np.zeros_like(a), where=total > 0)


def ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks, tied values sharing the mean of their ranks."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x))
    r[order] = np.arange(1, len(x) + 1)
    for value in np.unique(x):
        tied = x == value
        r[tied] = r[tied].mean()
    return r


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ: Pearson's correlation of the ranks (Spearman 1904). NaN for fewer than two keys or
    a constant row."""
    if len(a) < 2:
        return float("nan")
    ra, rb = ranks(a) - (len(a) + 1) / 2, ranks(b) - (len(b) + 1) / 2
    den = np.sqrt((ra**2).sum() * (rb**2).sum())
    return float((ra * rb).sum() / den) if den > 0 else float("nan")


def norms(weights: Tensor, transformed: Tensor) -> tuple[Tensor, Tensor]:
    """Kobayashi et al.'s norms from one layer's query row ``weights`` ``(H, K)`` and ``transformed``
    ``(H, K, dim)`` = f_lh(x_j): per head ‖a · f‖ ``(H, K)`` and for the layer ‖Σ_h a · f‖ ``(K,)``."""
    weighted = weights[..., None] * transformed
    return weighted.norm(dim=-1), weighted.sum(0).norm(dim=-1)


def value_zeroing(outputs: Tensor, unread: Tensor) -> Tensor:
    """``outputs`` ``(K + 1, dim)``: row 0 layer l's output at I as computed, row 1 + j with key j's value
    zeroed. Cosine distances to row 0, normalised to sum 1 (all zero stays zero). Keys flagged ``unread``
    (weight 0 in every head) are exactly 0: the batched re-run's rounding would otherwise give them ~1e-7."""
    d = 1 - torch.cosine_similarity(outputs[1:].double(), outputs[:1].double(), dim=-1)
    d = d.clamp(min=0).masked_fill(unread, 0.0)
    total = d.sum()
    return d / total if total > 0 else d


def rollout_rows(layers: list[Tensor], query: int) -> Tensor:
    """Row ``query`` of the rollout up to each layer: ``(L, K)``; layers are ``(H, T, T)``."""
    return torch.stack([attention_rollout(layers[: l + 1])[query] for l in range(len(layers))])


def alti(parts: Tensor, output: Tensor) -> Tensor:
    """ALTI's contributions (Ferrando et al. 2022, "Measuring the Mixing of Contextual Information in the
    Transformer", eq. 7–8; used for source and target in ALTI+, Ferrando et al. 2022, "Towards Opening the
    Black Box of Neural Machine Translation"): for ``output`` y ``(..., dim)`` made of ``parts`` T_k
    ``(..., n, dim)``, c_k = max(0, ‖y‖₁ − ‖y − T_k‖₁), normalised to sum 1 over k."""
    c = (output.abs().sum(-1, keepdim=True) - (output[..., None, :] - parts).abs().sum(-1)).clamp(min=0)
    total = c.sum(-1, keepdim=True)
    return torch.where(total > 0, c / total.clamp(min=torch.finfo(c.dtype).tiny), 0.0)


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


def shadow(module: nn.Module) -> nn.Module:
    """A copy of ``module``'s tree sharing every parameter and buffer: hooks and replaced methods on it
    never touch the model every session shares."""
    shared = {id(t): t for t in itertools.chain(module.parameters(), module.buffers())}
    return copy.deepcopy(module, shared)


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
    model, spec = ck.model, ck.spec
    if model.training:
        raise ValueError("the model is in training mode (dropout); attribution needs it in eval mode")
    k_spec = spec.kind(kind)
    tensors = _input_tensors(ck, inputs)
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
    L = len(weights)
    methods: dict[str, Tensor] = {"attention": torch.stack([w[0, :, query] for w in weights])}
    norm, norm_layer, zeroed = zip(
        *(
            _layer_measures(getattr(model, k_spec.blocks)[l], blocks[l], attn_name, traces, block_args[l], l, query)
            for l in range(L)
        )
    )
    methods.update(norm=torch.stack(norm), norm_layer=torch.stack(norm_layer), value_zeroing=torch.stack(zeroed))
    absent = {}
    if k_spec.cross:
        absent["rollout"] = "rollout multiplies self-attention layers; cross-attention maps one sequence onto another"
    else:
        methods["rollout"] = rollout_rows([w[0].detach() for w in weights], query)
    score, score_text = score_of(ck, logits, kind, query)
    grads = torch.autograd.grad(score, weights, allow_unused=True)
    methods["grad_attention"] = torch.stack(
        [w[0, :, query] * (0 if g is None else g[0, :, query]) for w, g in zip(weights, grads)]
    )
    mask = traces[(0, attn_name)].trace.mask
    visible = (
        np.ones(len(k_ids), dtype=bool)
        if mask is None
        else torch.broadcast_to(mask, weights[0].shape)[0, 0, query].cpu().numpy().astype(bool)
    )
    notes = _query_notes(ck, q_ids, query, visible)
    shares = (
        source_share(blocks, traces, block_args).to("cpu", torch.float64).numpy() if "cross_attn" in names else None
    )
    q_vocab, k_vocab = ck.vocabs[k_spec.query_vocab], ck.vocabs[k_spec.key_vocab]
    return Attribution(
        model=ck.task,
        kind=kind,
        query=query,
        query_tokens=list(view.queries) if view is not None else [q_vocab.itos[i] for i in q_ids],
        key_tokens=list(view.keys) if view is not None else [k_vocab.itos[i] for i in k_ids],
        visible=visible,
        methods={k: v.detach().to("cpu", torch.float64).numpy() for k, v in methods.items()},
        absent=absent,
        score=score_text,
        notes=notes,
        source_share=shares,
    )


def _layer_measures(block, twin_block, attn_name: str, traces: dict, block_args: tuple, layer: int, query: int):
    """Layer ``layer``'s norms ``(H, K)`` and ``(K,)`` and value zeroing ``(K,)`` for row ``query``, from the
    pass's traces of ``twin_block`` (the hooked copy) and a re-run of ``block`` (the model's own)."""
    t = traces[(layer, attn_name)].trace
    attn = getattr(twin_block, attn_name)
    a = t.weights[0, :, query].detach()  # (H, K)
    H, K, s = t.v.shape[1:]
    w_o = attn.unify.weight.view(attn.dim, H, s)  # head h's slice of the output projection
    f = torch.einsum("hks,dhs->hkd", t.v[0].detach(), w_o.detach())  # f_lh(x_j), (H, K, dim)
    per_head, whole = norms(a, f)
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
    out = rerun_with_outputs(block, x, replaced, *extra)[:, 0]
    return per_head, whole, value_zeroing(out, (a == 0).all(0)).to(a.dtype)


def _query_notes(ck: Checkpoint, q_ids: list[int], query: int, visible: np.ndarray) -> list[str]:
    """What to say about the query position itself: padding, or no key it may see."""
    notes = []
    pad = getattr(ck.model.config, "pad_id", None)
    if pad is not None and q_ids[query] == pad:
        notes.append(f"position {query} is padding: no other position reads it, so its row explains nothing")
    if not visible.any():
        notes.append(f"position {query} may attend to no key: every contribution is zero")
    return notes
