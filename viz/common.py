"""What every figure family shares: unique axis labels, input checks, a readable layout."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

FONT_SIZE = 14  # readable from the back of a room on a projector
TITLE_SIZE = 16
COLORSCALE = "Blues"
HEAD_COLORS = (  # one colour per head (colour-blind safe, Okabe-Ito then extras)
    "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#999999",
    "#7F3C8D", "#11A579", "#3969AC", "#F2B701", "#E73F74", "#80BA5A", "#E68310", "#008695",
)


def _lean_template() -> go.layout.Template:
    """plotly_white cut down to what 2-D charts use. plotly deep-copies the template into every new
    figure; the full one (3-D scenes, maps, defaults for every trace type) cost ~80 ms a figure."""
    white = pio.templates["plotly_white"]
    keep = ("autotypenumbers", "colorway", "font", "hovermode", "hoverlabel", "paper_bgcolor", "plot_bgcolor",
            "coloraxis", "xaxis", "yaxis", "shapedefaults", "annotationdefaults", "title")  # fmt: skip
    layout = {k: v for k, v in white.layout.to_plotly_json().items() if k in keep}
    data = {k: v for k, v in white.data.to_plotly_json().items() if k in ("heatmap", "bar", "scatter")}
    return go.layout.Template(layout=layout, data=data)


pio.templates["attention"] = _lean_template()
pio.templates.default = "attention"  # every figure of this process starts from the lean template


def to_numpy(x) -> np.ndarray:
    """A float numpy array from a tensor (any device, with or without grad) or array-like."""
    if hasattr(x, "detach"):
        x = x.detach().to("cpu").float().numpy()
    return np.asarray(x, dtype=float)


def unique_labels(tokens: Sequence[str]) -> list[str]:
    """``"i:token"`` labels, so that repeated tokens never merge on an axis."""
    return [f"{i}:{t}" for i, t in enumerate(tokens)]


def check_matrix(weights, rows: Sequence[str] | None = None, cols: Sequence[str] | None = None, *, name: str = "weights") -> np.ndarray:
    """A 2-D array whose shape matches the token lists; a ValueError says what to fix."""
    w = to_numpy(weights)
    if w.ndim != 2:
        raise ValueError(f"{name} must be 2-D (queries, keys); got shape {w.shape}. Select one layer and head first.")
    if rows is not None and len(rows) != w.shape[0]:
        raise ValueError(f"{name} has {w.shape[0]} query rows but {len(rows)} query tokens were given")
    if cols is not None and len(cols) != w.shape[1]:
        raise ValueError(f"{name} has {w.shape[1]} key columns but {len(cols)} key tokens were given")
    return w


def check_stack(weights, *, ndim: int = 4, name: str = "attention") -> np.ndarray:
    """An array of ``ndim`` dimensions, e.g. (layers, heads, queries, keys)."""
    w = to_numpy(weights)
    if w.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions; got shape {w.shape}")
    return w


def house_layout(*, title: str | None = None, height: int | None = None, width: int | None = None) -> dict:
    """The house layout as a plain dict: large fonts, tight margins, optional fixed size."""
    layout = dict(font=dict(size=FONT_SIZE), margin=dict(l=10, r=10, t=60 if title else 20, b=10))
    if title:
        layout["title"] = dict(text=title, font=dict(size=TITLE_SIZE))
    return layout | {k: v for k, v in (("height", height), ("width", width)) if v is not None}


def base_layout(fig: go.Figure, *, title: str | None = None, height: int | None = None, width: int | None = None) -> go.Figure:
    """Apply the house layout (:func:`house_layout`) to an existing figure."""
    fig.update_layout(house_layout(title=title, height=height, width=width))
    return fig


def make_figure(data: Sequence[dict], layout: dict) -> go.Figure:
    """One figure from plain dicts, validated once. Building with ``go.Heatmap(...)``, then
    ``update_layout`` and ``update_xaxes`` parses and validates every property path on every call:
    ~22 ms for a 20 × 20 heatmap, against ~3 ms this way (on every rerun of every page)."""
    clean = lambda d: {k: v for k, v in d.items() if v is not None}
    return go.Figure(dict(data=[clean(t) for t in data], layout=clean(layout)))


def margins(*, l: float, t: float, b: float = 10, r: float = 10) -> dict:
    """A layout margin in whole pixels, set from the labels instead of measured in the browser (with
    the axes' ``automargin`` off): plotly's ``automargin`` measures every tick label and redraws,
    which doubled the drawing time of a heatmap."""
    return dict(l=round(l), t=round(t), b=round(b), r=round(r))


def text_px(labels: Sequence[str], size: float) -> float:
    """A generous estimate of the widest label's width in pixels (0.62 em a character)."""
    return 0.62 * size * max((len(str(label)) for label in labels), default=1)


def fit_size(n_rows: int, n_cols: int, *, cell: int = 34, min_size: int = 320, max_size: int = 900) -> tuple[int, int]:
    """A (height, width) in pixels that keeps cells readable without overflowing the page."""
    h = min(max(min_size, 140 + cell * n_rows), max_size)
    w = min(max(min_size, 180 + cell * n_cols), max_size)
    return h, w


def for_projector(fig: go.Figure, scale: float = 1.4) -> go.Figure:
    """A copy of ``fig`` with every font (layout, title, axes, legend, colour bars, annotations,
    cell text) ``scale`` times larger and the height grown to match; ``fig`` itself is untouched,
    so cached figures stay as they are."""
    out = go.Figure(fig)

    def grow(font, default: int) -> dict:
        return dict(size=round((font.size if font and font.size else default) * scale))

    out.update_layout(font=grow(out.layout.font, FONT_SIZE))
    if out.layout.title and out.layout.title.text:
        out.update_layout(title_font=grow(out.layout.title.font, TITLE_SIZE))
    out.update_layout(legend_font=grow(out.layout.legend.font, FONT_SIZE))
    out.for_each_xaxis(lambda a: a.update(tickfont=grow(a.tickfont, FONT_SIZE), title_font=grow(a.title.font, FONT_SIZE)))
    out.for_each_yaxis(lambda a: a.update(tickfont=grow(a.tickfont, FONT_SIZE), title_font=grow(a.title.font, FONT_SIZE)))
    out.for_each_annotation(lambda a: a.update(font=grow(a.font, FONT_SIZE)))
    for trace in out.data:
        if "textfont" in trace and trace.textfont.size:
            trace.textfont.size = round(trace.textfont.size * scale)
        if "colorbar" in trace:
            trace.colorbar.tickfont = grow(trace.colorbar.tickfont, FONT_SIZE)
    if out.layout.height:
        out.update_layout(height=round(out.layout.height * min(scale, 1.25)))
    margin = out.layout.margin
    out.update_layout(margin={side: round(getattr(margin, side) * scale) for side in "ltb" if getattr(margin, side)})
    return out
