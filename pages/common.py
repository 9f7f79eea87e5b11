"""What the pages share: the sidebar, cached model loading, URL state, input checks, downloads.

Models load once per process through ``st.cache_resource`` and are shared read-only by every
session; pages never mutate them (head ablation goes through ``head_mask`` arguments).
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import torch

from model.training.checkpoint import Checkpoint, CheckpointError, default_dir, load_checkpoint
from viz.common import for_projector, printable
from viz.export import figures_to_html

# One torch thread per script run unless a deployment says otherwise: bench/threads.py measured 1 thread
# as fast as 2 or faster for one user (docs/RESULTS.md), and with many sessions at once a second thread
# per run only oversubscribes the cores.
_threads = os.environ.get("ATTENTION_TORCH_THREADS", "1")
torch.set_num_threads(int(_threads) if _threads.isdigit() and int(_threads) > 0 else 1)

TRAIN_COMMANDS = {
    "classifier": "python -m model train classifier",
    "generator": "python -m model train generator",
    "translator": "python -m model train translator",
}
MAX_INPUT_CHARS = 2000  # longer text is cut before tokenising, with a note


def available_devices() -> list[str]:
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        devices.append("mps")
    return devices


def device() -> str:
    """The device chosen in the sidebar (CPU until the user picks another)."""
    return st.session_state.get("device", "cpu")


def sidebar() -> None:
    devices = available_devices()
    initial = url_value("device", "cpu", str)
    st.sidebar.selectbox(
        "Device",
        devices,
        index=devices.index(initial) if initial in devices else 0,
        key="device",
        help="Where the models run. GPU appears when this machine has one.",
    )
    projector_toggle()
    st.sidebar.caption(f"torch {torch.__version__} · {torch.get_num_threads()} CPU threads")
    for task in TRAIN_COMMANDS:
        ck = get_checkpoint(task, device())
        st.sidebar.caption(f"{task}: {'✅ trained model loaded' if isinstance(ck, Checkpoint) else '⚠️ no model'}")


@st.cache_resource(show_spinner="Loading model…", max_entries=8)
def _load(task: str, directory: str, dev: str) -> Checkpoint | str:
    try:
        return load_checkpoint(directory, task=task, device=dev)
    except CheckpointError as e:
        return str(e)


def get_checkpoint(task: str, dev: str | None = None) -> Checkpoint | str:
    """The shipped checkpoint for ``task`` on ``dev``, or an error message saying what is wrong."""
    return _load(task, str(default_dir(task)), dev or device())


def require_checkpoint(task: str) -> Checkpoint:
    """The checkpoint, or stop the page with a clear message and the command that trains it."""
    ck = get_checkpoint(task)
    if isinstance(ck, Checkpoint):
        return ck
    st.error(f"The {task} model could not be loaded: {ck}")
    st.info(f"Train it with `{TRAIN_COMMANDS[task]}` (see the README). The other pages still work.")
    st.stop()


def url_value(key: str, default: Any, cast: Callable[[str], Any] = str) -> Any:
    """The value of ``key`` in the URL, cast, or ``default`` when absent or malformed."""
    raw = st.query_params.get(key)
    if raw is None:
        return default
    try:
        return cast(raw)
    except (TypeError, ValueError):
        return default


def init_state(key: str, default: Any, cast: Callable[[str], Any] = str) -> None:
    """Seed a widget's session state from the URL once per session, so shared links reproduce a view."""
    if key not in st.session_state:
        st.session_state[key] = url_value(key, default, cast)


def bounded(lo: float, hi: float, kind: type = int) -> Callable[[str], Any]:
    """A URL cast to ``kind`` that rejects values outside ``lo..hi`` (the widget would refuse them)."""

    def cast(raw: str) -> Any:
        value = kind(raw)
        if not lo <= value <= hi:
            raise ValueError(f"{value} is outside {lo}..{hi}")
        return value

    return cast


def one_of(options: Sequence[str]) -> Callable[[str], str]:
    """A URL cast that accepts only one of ``options`` (e.g. a radio's choices)."""

    def cast(raw: str) -> str:
        if raw not in options:
            raise ValueError(f"{raw!r} is not one of {list(options)}")
        return raw

    return cast


def view_choice(key: str, views: dict[str, str], *, help: str, label: str = "Show") -> str:
    """A horizontal radio over ``views`` (key -> label), seeded from the URL (the first view when it
    is absent or unknown); returns the chosen key. Pages show one view at a time with it, so a new
    input redraws one chart instead of all of them."""
    options = list(views)
    init_state(key, options[0], one_of(options))
    st.radio(label, options, key=key, format_func=views.get, horizontal=True, help=help)
    return st.session_state[key]


def keep_valid(key: str, options: Sequence[Any], default: Any) -> None:
    """Reset a widget's state to ``default`` when it is not among ``options`` (e.g. a URL asked for
    layer 5 of a model with 2 layers). Call before the widget is created."""
    if st.session_state.get(key, default) not in options:
        st.session_state[key] = default


def set_url(values: dict[str, str]) -> None:
    """Put ``values`` into the URL in one message to the browser, and none when the URL already
    holds them: every write makes the browser push a history entry and match the page routes again
    (about 3 ms each in Chromium's profile of an interaction, and pages sync several keys a run)."""
    changed = {k: v for k, v in values.items() if st.query_params.get(k) != v}
    if changed:
        st.query_params.update(changed)


def sync_url(*keys: str) -> None:
    """Write the current values of widget ``keys`` into the URL."""
    values = {}
    for key in keys:
        if key in st.session_state:
            value = st.session_state[key]
            values[key] = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    set_url(values)


def clean_text(text: str | None, *, what: str = "input") -> str | None:
    """Stripped text cut to ``MAX_INPUT_CHARS``; shows a message and returns None when empty."""
    text = (text or "").strip()
    if not text:
        st.warning(f"The {what} is empty. Type some text to see its attention.")
        return None
    if len(text) > MAX_INPUT_CHARS:
        st.info(f"The {what} has {len(text):,} characters; only the first {MAX_INPUT_CHARS:,} are used.")
        text = text[:MAX_INPUT_CHARS]
    return text


CHART_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}  # plotly's toolbar


def show_figure(
    fig: go.Figure,
    key: str,
    *,
    csv: pd.DataFrame | np.ndarray | None = None,
    csv_name: str = "attention.csv",
    html_name: str | None = None,
) -> None:
    """A plotly chart (its toolbar exports PNG) plus a CSV download of its numbers and, with
    ``html_name``, a "Download HTML" button for the figure as a standalone interactive file.
    In projector mode every font of the chart is drawn larger (the downloads keep the originals)."""
    shown = for_projector(fig) if st.session_state.get(PROJECTOR_URL) else fig
    st.plotly_chart(shown, key=key, config=CHART_CONFIG)
    if csv is not None:
        df = csv if isinstance(csv, pd.DataFrame) else pd.DataFrame(csv)
        st.download_button(  # the file is written when clicked, not on every rerun
            "Download CSV",
            data=lambda: df.to_csv().encode("utf-8"),
            file_name=csv_name,
            mime="text/csv",
            key=f"{key}-csv",
            on_click="ignore",
        )
    if html_name is not None:
        title = html.unescape(fig.layout.title.text or "Attention Explorer figure")  # figure titles are escaped
        html_button("Download HTML", [fig], title, key=f"{key}-html", file_name=html_name)


def output_text(text: str, parent: Any = st) -> None:
    """A model's output (a translation, generated text) in a bordered box under ``parent`` (a column,
    or the page). st.text, not st.code: st.code makes the browser load a 1.5 MB syntax highlighter
    (the page's resource timings) to show a few plain words."""
    parent.container(border=True).text(text)


Figures = Sequence[go.Figure] | Callable[[], Sequence[go.Figure]]


def html_button(label: str, figs: Figures, title: str, *, key: str, file_name: str, notes: str = "") -> None:
    """A download button whose standalone HTML is built only when clicked (it embeds ~5 MB of plotly.js).
    ``figs`` may be a function that builds them, so figures the page does not show cost nothing until then."""
    build = figs if callable(figs) else (lambda figs=list(figs): figs)
    st.download_button(
        label,
        data=lambda: figures_to_html(list(build()), title, notes).encode("utf-8"),
        file_name=file_name,
        mime="text/html",
        key=key,
        on_click="ignore",
        help="One HTML file with interactive charts; it opens offline in any browser.",
    )


def export_view_button(figs: Figures, title: str, key: str, *, notes: str = "", file_name: str | None = None) -> None:
    """Offer the page's main figures (``figs``, in order, or a function that builds them on click) as one
    standalone HTML file under ``title`` and ``notes``."""
    if not callable(figs) and not figs:
        return
    name = file_name or (re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "attention-explorer") + ".html"
    html_button("Download this view as HTML", figs, title, key=key, file_name=name, notes=notes)


def escape(text: str) -> str:
    """HTML-escaped text, for the few places that render markup."""
    return html.escape(text, quote=True)


MARKDOWN_SPECIALS = "\\`*_{}[]()#+-.!|<>~$&"


def markdown_escape(text: str) -> str:
    """Text that Markdown (st.markdown, st.warning, ...) shows literally: user words in messages."""
    return "".join("\\" + ch if ch in MARKDOWN_SPECIALS else ch for ch in " ".join(text.split()))


def listing(items: Sequence[str], *, limit: int = 20, width: int = 30) -> str:
    """User tokens as a Markdown-safe, comma-separated list; long items and long lists are shortened,
    and control or invisible characters show as their code point (``⟨U+202E⟩``), as on the axes."""
    visible = [printable(t) for t in items[:limit]]
    shown = [markdown_escape(t if len(t) <= width else t[: width - 1] + "…") for t in visible]
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(shown) + more


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 word"``, ``"2 words"`` (``many`` for irregular plurals)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def sentence_end(text: str) -> str:
    """The full stop a sentence about ``text`` still needs: none when it already ends with one."""
    return "" if text.rstrip().endswith((".", "!", "?", "…")) else "."


PROJECTOR_URL = "projector"  # ?projector=1 turns the projector theme on
PROJECTOR_CSS = """<style>
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li { font-size: 1.35rem !important; line-height: 1.5; }
[data-testid="stMain"] h1 { font-size: 3.2rem !important; }
[data-testid="stMain"] h2 { font-size: 2.5rem !important; }
[data-testid="stMain"] h3 { font-size: 2rem !important; }
[data-testid="stWidgetLabel"] p { font-size: 1.3rem !important; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p { font-size: 1.2rem !important; }
[data-testid="stMetricValue"] { font-size: 3rem !important; }
[data-testid="stMain"] button p, [data-testid="stMain"] input, [data-testid="stMain"] textarea,
[data-baseweb="select"] div, [data-baseweb="tab"] p { font-size: 1.3rem !important; }
[data-testid="stSidebar"] p, [data-testid="stSidebar"] label { font-size: 1.15rem !important; }
</style>"""


def projector_toggle() -> None:
    """The sidebar's projector switch: larger text for the back of a room, kept in the URL."""
    init_state(PROJECTOR_URL, False, lambda raw: raw.lower() in ("1", "true", "yes", "on"))
    st.sidebar.toggle(
        "Projector mode", key=PROJECTOR_URL, help="Larger text for teaching; a link with ?projector=1 opens in it."
    )
    if st.session_state[PROJECTOR_URL]:
        set_url({PROJECTOR_URL: "1"})
        st.markdown(PROJECTOR_CSS, unsafe_allow_html=True)  # a fixed stylesheet: no user text
    else:
        st.query_params.pop(PROJECTOR_URL, None)


STEP_KEYS_JS = """<script>
(() => {
  // Arrow keys click the page's "Previous step" / "Next step" buttons, unless the user is typing.
  const doc = window.parent.document;
  const labels = {ArrowLeft: "Previous step", ArrowRight: "Next step"};
  const onKey = (event) => {
    const label = labels[event.key];
    const target = event.target;
    if (!label || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
    const button = [...doc.querySelectorAll("button")].find((b) => !b.disabled && b.innerText.trim() === label);
    if (button) { event.preventDefault(); button.click(); }
  };
  if (doc.__attentionStepKeys) doc.removeEventListener("keydown", doc.__attentionStepKeys);
  doc.__attentionStepKeys = onKey;
  doc.addEventListener("keydown", onKey);
  window.addEventListener("pagehide", () => {
    if (doc.__attentionStepKeys === onKey) {
      doc.removeEventListener("keydown", onKey);
      doc.__attentionStepKeys = undefined;
    }
  });
})();
</script>"""


def stepper(key: str, titles: Sequence[str], *, url_key: str = "step") -> int:
    """Previous/Next buttons, a step picker and the arrow keys over ``titles``; returns the step (1-based).

    The step lives in ``st.session_state[key]`` and in the URL (``?step=N``), so every step has a
    link. The keys work through a tiny fixed script (no user text) that clicks the buttons.
    """
    n = len(titles)
    if not n:
        raise ValueError("the stepper needs at least one step")
    if key not in st.session_state:
        st.session_state[key] = url_value(url_key, 1, bounded(1, n))
    keep_valid(key, range(1, n + 1), 1)

    def move(delta: int) -> None:
        st.session_state[key] = min(max(1, st.session_state[key] + delta), n)

    prev, middle, nxt = st.columns([1, 4, 1], vertical_alignment="center")
    step = st.session_state[key]
    prev.button("Previous step", key=f"{key}_prev", on_click=move, args=(-1,), disabled=step <= 1, width="stretch")
    middle.selectbox(
        "Step",
        range(1, n + 1),
        key=key,
        format_func=lambda i: f"{i}/{n} · {titles[i - 1]}",
        label_visibility="collapsed",
    )
    nxt.button("Next step", key=f"{key}_next", on_click=move, args=(1,), disabled=step >= n, width="stretch")
    set_url({url_key: str(st.session_state[key])})
    st.iframe(STEP_KEYS_JS, height=1)  # invisible; st.iframe runs the script with access to the page
    return st.session_state[key]
