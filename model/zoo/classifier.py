"""The sentiment classifier: an encoder reads an English sentence and says positive or negative (SST-2)."""

from __future__ import annotations

from model.nets.classifier import Classifier, ClassifierConfig
from model.zoo.records import Examples, KindSpec, ModelEntry, ModelSpec

ENTRY = ModelEntry(
    spec=ModelSpec(
        name="classifier",
        data="SST-2",
        corpus="sst2.txt",
        title="Sentiment classifier",
        short="cls",
        kinds=(
            KindSpec(
                "encoder", "Self-attention", "query", "key", "ids", "ids", "words", "words", query_from="the sentence"
            ),
        ),
        inputs=("ids",),
        input_name="English sentence",
        unit="words",
        output="classes",
    ),
    net=Classifier,
    config=ClassifierConfig,
    recipe="classifier.json",
    examples=Examples(
        ablation="the acting is wonderful but the plot is thin",
        profile="the acting is wonderful but the plot is thin",
        pair=("a good film", "a bad film"),  # one word swapped: the same length, so B − A is drawn
    ),
)
