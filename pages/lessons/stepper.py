"""A step-by-step control: Previous/Next buttons, a step picker and the arrow keys."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from pages.shared.state import bounded, keep_valid, set_url, url_value

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
