"""The attention explorer's data: one run's attention, every kind, layer and head, for the browser.

:func:`explorer_payload` turns a sequence of :class:`~model.core.results.AttentionKind` into a
dict: token labels and axis names as JSON-able values, every weight in one little-endian float32
blob. :func:`pack_payload` makes that one ``bytes`` value for Streamlit's components v2 (which
passes raw bytes through untouched: 4 bytes per weight, no JSON lists); :func:`explorer_html` makes
one standalone HTML file with the same ``explorer.js``/``explorer.css`` and the data inlined (weights
as base64), which works from ``file://`` with no network. Nothing here imports streamlit.

Tokens reach the browser only as display labels (:func:`display_token`): control, format and other
invisible characters become their code point (``U+202E``), so no bidi control reaches the page; the
script draws them as text (``textContent``, canvas ``fillText``), never as markup.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from model.core.results import AttentionKind
from viz.common import HEAD_COLORS, printable

HERE = Path(__file__).resolve().parent
VIEWS = ("heatmap", "lines", "grid", "mean", "rollout")
URL_FIELDS = ("kind", "layer", "head", "view")
MAGIC = b"AEX1"  # packed payload: MAGIC, uint32 header length, header JSON, padding to 4, float32 weights
MAX_WEIGHTS = 16_000_000  # 64 MB of float32: more would be slow to send and to hold in a browser tab


def display_token(token: str) -> str:
    """``token`` as the explorer shows it: as every figure shows it (:func:`viz.common.printable`:
    newline ``⏎``, a bidi override ``⟨U+202E⟩``), and a lone space as ``␣``, the empty string as ``∅``,
    so no token is blank."""
    return {"": "∅", " ": "␣"}.get(token) or printable(token)


def url_prefix(prefix: str) -> str:
    """``"cls"`` and ``"cls_"`` both name the URL keys ``cls_layer``, ``cls_head``, ..."""
    return prefix if not prefix or prefix.endswith("_") else prefix + "_"


def clamp_state(kinds: Sequence[AttentionKind], state: Mapping[str, Any] | None, rollout_of: str | None = None) -> dict:
    """``state`` (kind name, layer, head, view; any of them missing, mistyped or out of range) as the
    nearest state that exists in ``kinds``: a new input keeps the layer and head where it still has them.
    The "rollout" view exists only when ``rollout_of`` names the kind the rollout belongs to."""
    state = dict(state or {})
    names = [k.name for k in kinds]
    kind = state.get("kind") if state.get("kind") in names else names[0]
    ak = kinds[names.index(kind)]
    views = VIEWS if rollout_of else VIEWS[:-1]
    view = state.get("view") if state.get("view") in views else "heatmap"
    if view == "rollout" and kind != rollout_of:
        view = "mean"
    return {
        "kind": kind,
        "layer": _clamped_int(state.get("layer"), ak.layers),
        "head": _clamped_int(state.get("head"), ak.heads),
        "view": view,
    }


def _clamped_int(raw: Any, n: int) -> int:
    try:
        value = int(str(raw).strip()) if not isinstance(raw, (int, np.integer)) else int(raw)
    except ValueError:
        return 0
    return min(max(value, 0), n - 1)


def state_from_url(query: Mapping[str, Any], prefix: str) -> dict[str, str]:
    """The explorer's fields found in a query-parameter mapping (``st.query_params``) under ``prefix``."""
    p = url_prefix(prefix)
    found = {}
    for field in URL_FIELDS:
        raw = query.get(p + field)
        if isinstance(raw, list):  # AppTest and some mappings give lists
            raw = raw[-1] if raw else None
        if raw is not None:
            found[field] = str(raw)
    return found


def state_to_url(state: Mapping[str, Any], prefix: str) -> dict[str, str]:
    """The URL keys the browser writes for ``state`` (the inverse of :func:`state_from_url`)."""
    p = url_prefix(prefix)
    return {p + field: str(state[field]) for field in URL_FIELDS if field in state}


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


def script_json(value: Any) -> str:
    """JSON that is safe inside an HTML ``<script>`` element: ``<``, ``>``, ``&`` and the line
    separators U+2028/2029 are written as ``\\u`` escapes, so no token can close the script."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for ch in "<>&\u2028\u2029":
        text = text.replace(ch, f"\\u{ord(ch):04x}")
    return text


def asset(name: str) -> str:
    """The text of ``explorer.js``, ``explorer.css`` or ``explorer.html`` beside this module."""
    return (HERE / name).read_text(encoding="utf-8")


def explorer_html(payload: Mapping[str, Any], title: str = "") -> str:
    """One standalone HTML document: the explorer with ``payload`` inlined (weights as base64). It
    needs no server and no network (``file://`` works); every view, hover and key works, the
    click-to-explain needs the app, and the file says so."""
    header = {k: v for k, v in payload.items() if k != "weights"}
    data = {**header, "weights_b64": base64.b64encode(payload["weights"]).decode("ascii"), "standalone": True}
    safe_title = html.escape(title or payload.get("title") or "Attention explorer", quote=True)
    js = asset("explorer.js").replace("</", "<\\/")  # the script is ours, but never let it end early
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="Attention Explorer">\n'
        f"<title>{safe_title}</title>\n"
        f"<style>{STANDALONE_CSS}\n{asset('explorer.css')}</style>\n</head>\n<body>\n"
        f"<h1>{safe_title}</h1>\n"
        '<p class="note">Hover any cell or token; the keyboard works once the explorer has focus (click it): '
        "arrow keys move the cell, [ and ] change head, Page Up / Page Down change layer. Explaining a "
        "weight (a click or Enter) needs the app: this file has the weights, not the model.</p>\n"
        '<div id="explorer-host"></div>\n'
        f'<script type="application/json" id="explorer-data">{script_json(data)}</script>\n'
        f'<script type="module">\n{js}\nmountStandalone(document.getElementById("explorer-host"), '
        'JSON.parse(document.getElementById("explorer-data").textContent));\n</script>\n'
        "</body>\n</html>\n"
    )


STANDALONE_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1200px;
       padding: 0 1rem; color: #31333f; background: #fff; }
@media (prefers-color-scheme: dark) { body { color: #fafafa; background: #0e1117; } }
h1 { font-size: 1.6rem; }
.note { color: #777; font-size: 0.9rem; line-height: 1.4; }
"""
