"""How long the figures take to build on the server, per figure family, at the shipped models' sizes.

    python -m bench.figures [--repeats 30]

Every rerun of a page builds its figures again (a new sentence, a new layer or head), so this is
server time on every interaction. For each family: building the figure (``viz``), and what
``st.plotly_chart`` then does with it (validating it again into a figure and writing its JSON),
median milliseconds over ``--repeats``. Inputs are random weights of the classifier's and
translator's shapes for 20 tokens. Prints one JSON object.
"""

from __future__ import annotations

import argparse

import numpy as np
import plotly
import plotly.io as pio

from bench._server import emit, median_time
from viz.attention import (
    attention_heatmap,
    causal_step_figures,
    head_grid,
    heads_heatmap,
    query_bar,
)
from viz.compare import change_grid, difference_heatmap, distribution_bars, pair_heatmaps
from viz.profiles import profile_lines


def median_ms(fn, repeats: int) -> float:
    return median_time(fn, repeats)  # one warm-up call first: imports, templates


def streamlit_side(fig) -> str:
    """What st.plotly_chart does with a figure (streamlit/elements/plotly_chart.py)."""
    figure = plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True)
    return pio.to_json(figure, validate=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    tokens = [f"word{i}" for i in range(20)]
    norm = lambda a: a / a.sum(axis=-1, keepdims=True)
    one, cls, tr = norm(rng.random((20, 20))), norm(rng.random((2, 4, 20, 20))), norm(rng.random((3, 8, 20, 20)))
    probs_a = {f"w{i}": float(p) for i, p in enumerate(norm(rng.random(30)))}
    probs_b = {f"w{i}": float(p) for i, p in enumerate(norm(rng.random(30)))}
    scores = rng.standard_normal((20, 20))
    causal = np.tril(np.ones((20, 20), dtype=bool))
    masked = np.where(causal, scores, -np.inf)
    softmax = norm(np.exp(masked - masked.max(axis=-1, keepdims=True)))
    steps = (scores, causal, masked, softmax, tokens)
    metrics = ["entropy", "self", "previous", "next", "first", "distance"]
    profiles = [(f"layer {i // 4} · head {i % 4}", list(rng.standard_normal(6))) for i in range(5)]
    builders = {
        "heatmap 20x20": lambda: attention_heatmap(one, tokens, title="one head"),
        "heads of one query 8x20": lambda: heads_heatmap(tr[0, :, 3], tokens, query_label="3:word3"),
        "bar 20": lambda: query_bar(one[0], tokens, query_label="0:word0"),
        "grid 2x4 (classifier)": lambda: head_grid(cls, tokens, title="grid"),
        "grid 3x8 (translator)": lambda: head_grid(tr, tokens, title="grid"),
        "causal steps, all four 20x20 (generator export)": lambda: causal_step_figures(*steps),
        "causal step, the open tab's 20x20 (generator)": lambda: causal_step_figures(*steps, only=["masked"]),
        # the pages beyond the five
        "pair 20x20 + 20x20 (pairs)": lambda: pair_heatmaps(one, (tokens, tokens), tr[0, 0], (tokens, tokens)),
        "difference 20x20 (pairs, ablation)": lambda: difference_heatmap(one - tr[0, 0], tokens),
        "distribution bars 2x10 (pairs, ablation)": lambda: distribution_bars(probs_a, probs_b),
        "change grid 2x4 (ablation)": lambda: change_grid(rng.random((2, 4)), off={(0, 1)}),
        "profile lines 6x5 (profiles)": lambda: profile_lines(profiles, metrics, title="profiles"),
    }
    result = {}
    for name, build in builders.items():
        built = build()
        figs = list(built.values()) if isinstance(built, dict) else [built]  # several: Streamlit takes each
        result[name] = {
            "build_ms": median_ms(build, args.repeats),
            "streamlit_ms": median_ms(lambda f=figs: [streamlit_side(one) for one in f], args.repeats),
        }
    emit({"benchmark": "figures", "repeats": args.repeats, "figures": result})


if __name__ == "__main__":
    main()
