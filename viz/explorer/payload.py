"""The explorer's data: one run's attention, every kind, layer and head, packed for the browser.

:func:`explorer_payload` turns a sequence of :class:`~model.core.results.AttentionKind` into a dict:
token labels and axis names as JSON-able values, every weight in one little-endian float32 blob.
:func:`pack_payload` makes that one ``bytes`` value for Streamlit's components v2 (which passes raw
bytes through untouched: 4 bytes per weight, no JSON lists); ``js/data.js`` reads it back.

Tokens reach the browser only as display labels (:func:`display_token`): control, format and other
invisible characters become their code point (``U+202E``), so no bidi control reaches the page; the
script draws them as text (``textContent``, canvas ``fillText``), never as markup.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from model.core.results import AttentionKind
from viz.common import HEAD_COLORS, WEIGHT_STOPS, printable
from viz.explorer.state import clamp_state

MAGIC = b"AEX1"  # packed payload: MAGIC, uint32 header length, header JSON, padding to 4, float32 weights
MAX_WEIGHTS = 16_000_000  # 64 MB of float32: more would be slow to send and to hold in a browser tab


def display_token(token: str) -> str:
    """``token`` as the explorer shows it: as every figure shows it (:func:`viz.common.printable`:
    newline ``⏎``, a bidi override ``⟨U+202E⟩``), and a lone space as ``␣``, the empty string as ``∅``,
    so no token is blank."""
    return {"": "∅", " ": "␣"}.get(token) or printable(token)


def rollout_kind(kinds: Sequence[AttentionKind]) -> AttentionKind:
    """The kind a rollout belongs to: the encoder's self-attention, else the first self-attention."""
    by_name = {k.name: k for k in kinds}
    return by_name.get("encoder") or next((k for k in kinds if not k.cross), kinds[0])


def explorer_payload(
    kinds: Sequence[AttentionKind],
    *,
    state: Mapping[str, Any] | None = None,
    rollout: np.ndarray | None = None,
    title: str = "",
) -> dict[str, Any]:
    """The explorer's data for ``kinds`` (in display order): a JSON-able header and, under
    ``"weights"``, every kind's ``(layers, heads, queries, keys)`` weights, then the rollout, as one
    little-endian float32 ``bytes`` blob; each kind says where its weights start (in floats). A kind
    with masked cells is ``packed``: each head sends only its unmasked cells, row by row (the masked
    ones are 0 by definition); :func:`kind_weights` and the browser put them back in place.

    ``state`` (kind, layer, head, view) is the initial view, clamped to what exists. ``rollout`` is a
    ``(queries, keys)`` array for the encoder's self-attention. Raises ValueError on empty input or
    shapes that do not match."""
    kinds = list(kinds)
    if not kinds:
        raise ValueError("the explorer needs at least one kind of attention (an AttentionKind)")
    if len({k.name for k in kinds}) != len(kinds):
        raise ValueError(f"kind names must be unique, got {[k.name for k in kinds]}")
    total = sum(int(np.size(k.weights)) for k in kinds)
    if total > MAX_WEIGHTS:
        raise ValueError(
            f"{total:,} attention weights ({total * 4 / 1e6:.0f} MB) are too many for the explorer (at most "
            f"{MAX_WEIGHTS:,}): use a shorter input or fewer layers"
        )
    blobs, offset, meta = [], 0, []
    for k in kinds:
        w = np.ascontiguousarray(k.weights, dtype="<f4")
        if w.ndim != 4 or 0 in w.shape:
            raise ValueError(f"{k.name}: weights must be (layers, heads, queries, keys) with none empty, got {w.shape}")
        mask = np.broadcast_to(np.asarray(k.mask, dtype=bool), w.shape[-2:])
        packed = not mask.all()
        if packed:  # only the cells the model may attend to: a causal map sends half its floats
            w = np.ascontiguousarray(w[:, :, mask])
        blobs.append(w.tobytes())
        meta.append({**_kind_meta(k, offset), "packed": packed})
        offset += w.size
    rollout_meta = None
    if rollout is not None:
        owner = rollout_kind(kinds)
        r = np.ascontiguousarray(rollout, dtype="<f4")
        if r.shape != owner.weights.shape[-2:]:
            raise ValueError(
                f"rollout has shape {r.shape}, but {owner.name} has {owner.weights.shape[-2:]} (queries, keys)"
            )
        blobs.append(r.tobytes())
        rollout_meta = {"kind": owner.name, "offset": offset}
    weights = b"".join(blobs)
    header = {
        "format": 1,
        "title": str(title),
        "kinds": meta,
        "rollout": rollout_meta,
        "state": clamp_state(kinds, state, rollout_meta and rollout_meta["kind"]),
        "head_colors": list(HEAD_COLORS),  # the lines view's colours, the same as the figures'
        "weight_stops": list(WEIGHT_STOPS),  # the maps' colour scale, the same as the figures' and the tables'
    }
    digest = hashlib.sha1(json.dumps(header["kinds"], sort_keys=True).encode() + weights).hexdigest()[:16]
    return {**header, "digest": digest, "weights": weights}


def _kind_meta(k: AttentionKind, offset: int) -> dict[str, Any]:
    L, H, Tq, Tk = k.weights.shape
    mask = np.asarray(k.mask, dtype=bool)
    return {
        "name": k.name,
        "title": k.title,
        "query_axis": k.query_axis,
        "key_axis": k.key_axis,
        "queries": [display_token(t) for t in k.queries],
        "keys": [display_token(t) for t in k.keys],
        "special": [bool(s) for s in k.special],
        "cross": bool(k.cross),
        "layers": L,
        "heads": H,
        "offset": offset,
        # one character per cell, row by row: "1" where the model may attend, "0" where it may not
        "mask": "".join("1" if m else "0" for m in mask.ravel()),
    }


def pack_payload(payload: Mapping[str, Any], **extra: Any) -> bytes:
    """``payload`` as one ``bytes`` value for the component: ``AEX1``, the header's length (uint32,
    little-endian), the header JSON (with ``extra``, e.g. ``projector``), zero padding to a multiple
    of 4, then the float32 weights."""
    header = {k: v for k, v in payload.items() if k != "weights"} | extra
    raw = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    pad = (-(len(MAGIC) + 4 + len(raw))) % 4
    return MAGIC + struct.pack("<I", len(raw) + pad) + raw + b" " * pad + payload["weights"]


def unpack_payload(blob: bytes) -> dict[str, Any]:
    """The inverse of :func:`pack_payload` (what the browser does), for tests and tools."""
    if blob[:4] != MAGIC:
        raise ValueError("not an attention explorer payload (it does not start with AEX1)")
    (n,) = struct.unpack("<I", blob[4:8])
    header = json.loads(blob[8 : 8 + n].decode("utf-8"))
    return {**header, "weights": blob[8 + n :]}


def weights_array(payload: Mapping[str, Any]) -> np.ndarray:
    """All weights of ``payload`` as one flat float32 array (views into it by each kind's offset)."""
    return np.frombuffer(payload["weights"], dtype="<f4")


def kind_weights(payload: Mapping[str, Any], meta: Mapping[str, Any]) -> np.ndarray:
    """One kind's ``(layers, heads, queries, keys)`` weights from ``payload`` (``meta`` is its header
    entry), with the masked cells of a packed kind back in place as 0."""
    L, H, Tq, Tk = meta["layers"], meta["heads"], len(meta["queries"]), len(meta["keys"])
    mask = np.frombuffer(meta["mask"].encode("ascii"), dtype=np.uint8).reshape(Tq, Tk) == ord("1")
    n = int(mask.sum()) if meta.get("packed") else Tq * Tk
    flat = weights_array(payload)[meta["offset"] : meta["offset"] + L * H * n]
    if not meta.get("packed"):
        return flat.reshape(L, H, Tq, Tk)
    out = np.zeros((L, H, Tq, Tk), dtype="<f4")
    out[:, :, mask] = flat.reshape(L, H, n)
    return out
