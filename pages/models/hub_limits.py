"""What the "Any model" page can open, said for a learner: how large a model may be, that each person's model
stays theirs within the server's memory for models, how much of a text it reads and what is never run. The setting behind the size limit is not on
the page: the README names it for whoever hosts the app, and a refused model's message names it too."""

from __future__ import annotations

import streamlit as st

from model.hub.cache import megabytes, memory_budget
from model.hub.errors import HubError
from model.hub.load import max_params
from pages.shared.text import markdown_escape


def size_text(cap: int) -> str:
    """A parameter count as a reader says it: ``"150 M"``, ``"1,000"``."""
    return f"{cap / 1e6:,.0f} M" if cap >= 10**6 else f"{cap:,}"


def memory_line() -> str:
    """How many models the server keeps, in a learner's words (the budget's setting is the host's)."""
    try:
        budget = f"{megabytes(memory_budget())} of memory"
    except HubError:  # a wrong setting is said where a model is opened
        budget = "the memory it sets aside"
    return (
        "The model you open stays yours while you use it: several people can each open their own, as many as fit "
        f"in {budget} (GPT-2 small takes about 500 MB). When the models others are using fill it, the page says "
        "so, and nobody's model is taken away."
    )


def limits_note() -> None:
    """The page's limits in a learner's words; a wrong hosting setting is a warning that says so."""
    try:
        cap = size_text(max_params())
    except HubError as err:  # the host's setting is not a number: say so, for the host
        st.warning(
            "This app's limit on model size is set wrongly, so no model can be opened. For whoever hosts the "
            f"app: {markdown_escape(str(err))}."
        )
        return
    st.info(
        "**What this page can open**\n"
        f"- Models of up to {cap} parameters (GPT-2 small has 124 M, DistilBERT 66 M). A larger one is "
        "refused with a message.\n"
        f"- {memory_line()}\n"
        "- The model reads the start of your text, as much as it was trained on (GPT-2 1,024 tokens, BERT 512; "
        "fewer for a large model, so that its maps fit in your browser). A note says when the text was cut.\n"
        "- Only the model's weights are read (safetensors files): code that comes with a model is never run."
    )
