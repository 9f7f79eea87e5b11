"""The Shakespeare generator: a causal decoder writes the next character (Tiny Shakespeare)."""

from __future__ import annotations

from model.nets.generator import Generator, GeneratorConfig
from model.zoo.records import Examples, KindSpec, ModelEntry, ModelSpec

ENTRY = ModelEntry(
    spec=ModelSpec(
        name="generator",
        data="Tiny Shakespeare",
        corpus="shakespeare.txt",
        title="Shakespeare generator",
        short="gen",
        kinds=(
            KindSpec(
                "encoder",
                "Causal self-attention",
                "query character",
                "key character",
                "ids",
                "ids",
                "chars",
                "chars",
                causal=True,
                query_from="the text so far",
            ),
        ),
        inputs=("ids",),
        input_name="prompt",
        unit="characters",
        output="next",
        limit_field="block_size",
        window=40,  # characters per heatmap axis: the last ones, readable on a projector
    ),
    net=Generator,
    config=GeneratorConfig,
    recipe="generator.json",
    examples=Examples(
        ablation="O Romeo, Romeo! wherefore art thou",
        profile="ROMEO:\nBut soft, what light through yonder window breaks?",
        pair=("thy father", "thy mother"),
    ),
)
