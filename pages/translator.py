"""Translator (German -> English): the translation (greedy or beam), encoder self-, decoder self- and
cross-attention per layer and head, a decoding-step view and a teacher-forced view on a reference."""

from __future__ import annotations

import streamlit as st
import torch

from model.analysis.inference import translate
from model.training.checkpoint import Checkpoint, default_dir
from model.training.tokenize import EOS, SOS
from pages.shared.display import export_view_button, output_text, show_figure
from pages.shared.models import device, get_checkpoint, require_checkpoint
from pages.shared.state import bounded, init_state, keep_valid, sync_url, view_choice
from pages.shared.text import clean_text, listing, markdown_escape
from viz.attention import (
    attention_heatmap,
    grid_frame,
    head_grid,
    heads_heatmap,
    mean_heads_heatmap,
    query_bar,
    weights_frame,
)

TASK = "translator"
EXAMPLES = {  # simple Multi30k-style captions and a reference translation for each
    "ein mann fährt fahrrad .": "a man rides a bike .",
    "zwei hunde spielen im schnee .": "two dogs play in the snow .",
    "eine frau liest ein buch im park .": "a woman reads a book in the park .",
    "ein kleines mädchen lacht .": "a little girl laughs .",
    "drei männer stehen vor einem gebäude .": "three men stand in front of a building .",
    "ein junge springt ins wasser .": "a boy jumps into the water .",
}
DEFAULT_TEXT = next(iter(EXAMPLES))
CUSTOM = "(your own sentence)"
DECODING = ("greedy", "beam")
# (maps key, label, query axis, key axis, which token lists label the rows and columns)
VIEWS = {
    "cross": ("Cross-attention", "query = English", "key = German", ("out", "src")),
    "encoder": ("Encoder self-attention", "query = German", "key = German", ("src", "src")),
    "decoder": ("Decoder self-attention (causal)", "query = English output", "key = English so far", ("out", "in")),
}
SHOW = {  # one view at a time (each is one chart to draw; the decoding step, three)
    "head": "One head",
    "mean": "Mean over heads",
    "grid": "Every layer and head",
    "step": "Decoding step n",
}


@st.cache_data(max_entries=64, show_spinner="Translating…")
def run_translator(directory: str, dev: str, text: str, beam_size: int, reference: str | None) -> dict:
    """Plain results for one sentence and decoding; ``directory`` and ``dev`` key the cache."""
    try:
        t = translate(get_checkpoint(TASK, dev), text, beam_size=beam_size, reference=reference)
    except ValueError as e:
        return {"error": str(e)}
    maps = t.attention
    stack = lambda ws: torch.stack([w[0] for w in ws]).numpy()  # (layers, heads, queries, keys)
    return {
        "src": t.src_tokens,
        "in": t.tgt_in,
        "out": t.tgt_out,
        "text": t.text,
        "encoder": stack(maps.encoder),
        "decoder": stack(maps.decoder),
        "cross": stack(maps.cross),
        "unknown": t.unknown,
        "truncated": t.truncated,
    }


def choose_example() -> None:
    choice = st.session_state["tr_example"]
    if choice != CUSTOM:
        st.session_state["tr_text"] = choice
        st.session_state["tr_reference"] = EXAMPLES[choice]


def controls() -> None:
    init_state("tr_text", DEFAULT_TEXT)
    init_state("tr_decoding", "greedy", lambda raw: DECODING[DECODING.index(raw)])
    init_state("tr_beam", 4, bounded(2, 8))
    init_state("tr_forced", False, lambda raw: raw == "True")
    init_state("tr_reference", EXAMPLES.get(st.session_state["tr_text"], ""))
    if "tr_example" not in st.session_state:
        text = st.session_state["tr_text"]
        st.session_state["tr_example"] = text if text in EXAMPLES else CUSTOM
    left, right = st.columns([3, 2])
    left.text_input("German sentence", key="tr_text", help="Lower case, like the Multi30k captions.")
    right.selectbox("Examples", [CUSTOM, *EXAMPLES], key="tr_example", on_change=choose_example)
    a, b, c = st.columns([1, 1, 2])
    a.radio("Decoding", DECODING, key="tr_decoding", horizontal=True, help="Beam search keeps several candidates.")
    b.slider("Beam size", 2, 8, key="tr_beam", disabled=st.session_state["tr_decoding"] == "greedy")
    c.toggle(
        "Teacher-forced view on a reference translation",
        key="tr_forced",
        help="Feed a correct English sentence to the decoder and see what each of its words attends to.",
    )
    st.text_input("Reference English translation", key="tr_reference", disabled=not st.session_state["tr_forced"])
    sync_url("tr_text", "tr_decoding", "tr_beam", "tr_forced", "tr_reference")


def input_notes(result: dict, max_len: int) -> bool:
    """Tell the user what the model could not read; False when nothing is left to show."""
    if result["truncated"]:
        st.info(f"The model reads at most {max_len - 2} words; only the first {max_len - 2} are used.")
    words = result["src"][1:-1]
    if result["unknown"] and len(result["unknown"]) == len(words):
        st.warning(
            "None of these words are in the model's German vocabulary, so it would only see `<unk>`. "
            "Try one of the examples: simple captions of everyday scenes."
        )
        return False
    if result["unknown"]:
        unknown = sorted(set(result["unknown"]))
        st.warning(
            f"{len(unknown)} German word(s) are not in the vocabulary and were read as `<unk>`: {listing(unknown)}"
        )
    return True


def labels(view: dict, which: str) -> list[str]:
    unknown = set(view["unknown"])
    return [f"{t} (unk)" if which == "src" and t in unknown and t not in (SOS, EOS) else t for t in view[which]]


def attention_view(view: dict, name: str, show: str, step: int) -> None:
    """One attention kind, one view of it: the chosen layer and head, the layer's head mean, or every
    layer and head."""
    _, query_name, key_name, (rows, cols) = VIEWS[name]
    att = view[name]
    L, H = att.shape[:2]
    q_tokens, k_tokens = labels(view, rows), labels(view, cols)
    axes = dict(query_name=query_name, key_name=key_name)
    layer = min(st.session_state["tr_layer"], L - 1)
    head = st.session_state["tr_head"]
    if layer != st.session_state["tr_layer"] and show != "grid":
        st.caption(f"This part has {L} layer(s); showing layer {layer}.")
    if show == "head":
        highlight = step - 1 if name != "encoder" else None
        one = attention_heatmap(
            att[layer, head], q_tokens, k_tokens, title=f"layer {layer} · head {head}", highlight_row=highlight, **axes
        )
        show_figure(
            one,
            "tr-head",
            csv=weights_frame(att[layer, head], q_tokens, k_tokens),
            csv_name=f"translator-{name}-layer{layer}-head{head}.csv",
        )
    elif show == "mean":
        title = f"layer {layer}: mean over the {H} heads"
        show_figure(mean_heads_heatmap(att[layer], q_tokens, k_tokens, title=title, **axes), "tr-mean")
    else:
        show_figure(
            head_grid(att, q_tokens, k_tokens, title=f"{L} layers × {H} heads", **axes),
            "tr-grid",
            csv=grid_frame(att, q_tokens, k_tokens),
            csv_name=f"translator-{name}-all-heads.csv",
        )


def export_figures(view: dict, layer: int, head: int) -> list:
    """Every figure of every attention kind at ``layer`` and ``head``, for the HTML export."""
    figs = []
    for name, (label, query_name, key_name, (rows, cols)) in VIEWS.items():
        att = view[name]
        L, H = att.shape[:2]
        at = min(layer, L - 1)
        q_tokens, k_tokens = labels(view, rows), labels(view, cols)
        axes = dict(query_name=query_name, key_name=key_name)
        figs += [
            attention_heatmap(att[at, head], q_tokens, k_tokens, title=f"{label}: layer {at} · head {head}", **axes),
            mean_heads_heatmap(att[at], q_tokens, k_tokens, title=f"{label}: layer {at}, mean over heads", **axes),
            head_grid(att, q_tokens, k_tokens, title=f"{label}: {L} layers × {H} heads", **axes),
        ]
    return figs


def step_section(view: dict, step: int) -> None:
    n_dec = view["cross"].shape[0]
    layer = min(st.session_state["tr_layer"], n_dec - 1)
    out = view["out"][step - 1]
    query = f"{step - 1}:{out}"
    src, tgt_in = labels(view, "src"), labels(view, "in")
    st.caption(
        f"Step {step}: the decoder wrote **{markdown_escape(out)}**. Its query looked at the German words "
        f"(cross-attention) and at the English written so far (decoder self-attention). Layer {layer}."
    )
    cross = view["cross"][layer, :, step - 1]  # (heads, German keys)
    show_figure(
        heads_heatmap(
            cross, src, query_label=query, key_name="key = German", title=f"cross-attention of {query}, per head"
        ),
        "tr-step-cross-heads",
    )
    show_figure(
        query_bar(
            cross.mean(axis=0),
            src,
            query_label=query,
            key_name="key = German",
            title=f"mean over heads: German words that {query} attended to",
        ),
        "tr-step-cross-bar",
    )
    self_row = view["decoder"][layer, :, step - 1, :step]  # the causal mask hides later inputs
    show_figure(
        heads_heatmap(
            self_row,
            tgt_in[:step],
            query_label=query,
            key_name="key = English so far",
            title=f"decoder self-attention of {query}, per head (later words are masked)",
        ),
        "tr-step-self-heads",
    )


@st.fragment
def attention_views(view: dict) -> None:
    L = max(view["encoder"].shape[0], view["decoder"].shape[0])
    H = view["encoder"].shape[1]
    T = len(view["out"])
    init_state("tr_layer", 0, bounded(0, L - 1))
    init_state("tr_head", 0, bounded(0, H - 1))
    init_state("tr_step", 1, bounded(1, T))
    keep_valid("tr_layer", range(L), 0)
    keep_valid("tr_head", range(H), 0)
    keep_valid("tr_step", range(1, T + 1), 1)
    init_state("tr_view", "cross", lambda raw: raw if raw in VIEWS else "cross")
    st.radio(
        "Attention",
        list(VIEWS),
        key="tr_view",
        format_func=lambda k: VIEWS[k][0],
        horizontal=True,
        help="Cross: English words looking at German words. Encoder: German looking at German. "
        "Decoder: English looking at the English written before it.",
    )
    show = view_choice("tr_show", SHOW, help="One view at a time, so a new sentence redraws one chart, not six.")
    a, b, c = st.columns(3)
    a.selectbox("Layer", range(L), key="tr_layer", format_func=lambda l: f"layer {l}")
    b.selectbox("Head", range(H), key="tr_head", format_func=lambda h: f"head {h}")
    if T > 1:
        c.slider("Decoding step n", 1, T, key="tr_step", help="Output token n is framed in the decoder views.")
    step = st.session_state["tr_step"] if T > 1 else 1
    if show == "step":
        st.subheader(f"Decoding step {step}: what output token {step} attended to")
        step_section(view, step)
    else:
        attention_view(view, st.session_state["tr_view"], show, step)
    notes = f"German: {' '.join(view['src'][1:-1])}\nEnglish: {view['text']}"
    layer, head = st.session_state["tr_layer"], st.session_state["tr_head"]
    export_view_button(lambda: export_figures(view, layer, head), "Translator (German to English)", "tr-export", notes=notes)
    sync_url("tr_view", "tr_show", "tr_layer", "tr_head", "tr_step")


@st.fragment
def page_body(ck: Checkpoint) -> None:
    """Everything that depends on the sentence, as one fragment: a new sentence reruns this, not the
    router and the sidebar (fewer messages to send and elements to redraw)."""
    controls()
    text = clean_text(st.session_state["tr_text"], what="German sentence")
    if text is None:
        return
    beam = int(st.session_state["tr_beam"]) if st.session_state["tr_decoding"] == "beam" else 1
    result = run_translator(str(default_dir(TASK)), device(), text, beam, None)
    if "error" in result:
        st.warning(f"Nothing to translate: {result['error']}.")
        return
    if not input_notes(result, ck.model.config.max_len):
        return
    st.subheader("Translation")
    output_text(result["text"] or "(the model wrote no words)")
    view = result
    if st.session_state["tr_forced"]:
        reference = clean_text(st.session_state["tr_reference"], what="reference translation")
        if reference is not None:
            view = run_translator(str(default_dir(TASK)), device(), text, 1, reference)
            st.info(
                "Teacher-forced view: the attention below is for the reference translation fed to the decoder, "
                "not for the model's own output."
            )
    st.subheader("Attention")
    attention_views(view)


st.title("Translator (German → English)")
st.caption(
    "An encoder-decoder transformer trained on Multi30k image captions. The encoder reads the German sentence; "
    "the decoder writes English one word at a time, attending to its own earlier words (causal self-attention) "
    "and to the German words (cross-attention)."
)
page_body(require_checkpoint(TASK))
