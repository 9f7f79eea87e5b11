"""What the AppTest page tests share: run a page with URL and session state, read its Plotly charts
through their JSON specs, read the URL it wrote. The fixtures (tiny checkpoints, ``app_env``) are in
``tests/conftest.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from model.core.checkpoint import CHECKPOINTS_ENV

ROOT = Path(__file__).resolve().parent.parent


def page(name: str) -> str:
    """The script of the page at address ``name`` (the registry's, pages/__init__.py), for :func:`run`."""
    from pages import page as entry

    return str(ROOT / entry(name).script)


def run(page: str, /, query: dict | None = None, **state) -> AppTest:
    """Run the script at ``page`` once, with ``query`` in the URL and ``state`` in the session."""
    at = AppTest.from_file(page, default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def run_on(checkpoints: Path, page: str, /, query: dict | None = None, **state) -> AppTest:
    """:func:`run` with the app reading ``checkpoints``, for module-scoped fixtures (which cannot
    use the function-scoped ``monkeypatch`` of ``app_env``)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CHECKPOINTS_ENV, str(checkpoints))
        return run(page, query, **state)


def clear_caches() -> None:
    """Forget every cached model and result, so no test sees another's checkpoints."""
    st.cache_resource.clear()
    st.cache_data.clear()


def charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def titles(at: AppTest) -> list[str]:
    return [c["layout"]["title"]["text"] for c in charts(at)]


def chart(at: AppTest, title_start: str, nth: int = 0) -> dict:
    """The ``nth`` chart whose title starts with ``title_start``."""
    found = [c for c in charts(at) if c["layout"]["title"]["text"].startswith(title_start)]
    assert len(found) > nth, f"no chart titled {title_start!r} in {titles(at)}"
    return found[nth]


def axis_titles(spec: dict, axis: str) -> str:
    """The titles of every ``axis`` ("xaxis", "yaxis") of a chart spec, joined by spaces."""
    return " ".join(v.get("title", {}).get("text", "") for k, v in spec["layout"].items() if k.startswith(axis))


def url(at: AppTest, key: str) -> str | None:
    """The value the page wrote into the URL under ``key`` (None when it wrote none)."""
    if key not in at.query_params:
        return None
    value = at.query_params[key]
    return value[0] if isinstance(value, list) else value


def explorers(at: AppTest) -> list[dict]:
    """Every attention explorer on the page: its payload header, with each kind's weights as a
    ``(layers, heads, queries, keys)`` array under ``"arrays"``."""
    from viz.explorer import kind_weights, unpack_payload

    out = []
    for element in at.get("bidi_component"):
        if not element.proto.component_name.endswith("attention_explorer"):
            continue
        payload = unpack_payload(element.proto.bytes)
        arrays = {k["name"]: kind_weights(payload, k) for k in payload["kinds"]}
        out.append({**payload, "arrays": arrays})
    return out


def explorer(at: AppTest, nth: int = 0) -> dict:
    found = explorers(at)
    assert len(found) > nth, f"{len(found)} explorer(s) on the page"
    return found[nth]


def matrices(at: AppTest) -> list[dict]:
    """The payload of every matrix view on the page (:func:`viz.matrixview.matrix_payload`)."""
    found = [e.proto for e in at.get("bidi_component") if e.proto.component_name.endswith("matrix_view")]
    views = [json.loads(p.json) for p in found]
    return [panel for view in views for panel in view.get("panels", [view])]  # each tab of a view


def matrix(at: AppTest, title_start: str, nth: int = 0) -> dict:
    """The ``nth`` matrix view whose title starts with ``title_start``, its values as rows."""
    found = [m for m in matrices(at) if m["title"].startswith(title_start)]
    assert len(found) > nth, f"no matrix titled {title_start!r} in {[m['title'] for m in matrices(at)]}"
    m = found[nth]
    n_cols = m["shape"][1]
    return {**m, "grid": [m["values"][i : i + n_cols] for i in range(0, len(m["values"]), n_cols)]}


def kind(payload: dict, name: str) -> dict:
    """One kind's header in an explorer payload."""
    return next(k for k in payload["kinds"] if k["name"] == name)
