"""The translator: an encoder reads German, a decoder writes English, cross-attention between them (Multi30k)."""

from __future__ import annotations

from model.nets.translator import Translator, TranslatorConfig
from model.zoo.records import Examples, KindSpec, ModelEntry, ModelSpec

ENTRY = ModelEntry(
    spec=ModelSpec(
        name="translator",
        data="Multi30k",
        corpus="multi30k_de.txt",
        title="Translator (de → en)",
        short="tr",
        kinds=(
            KindSpec(
                "encoder",
                "Encoder self-attention",
                "query = German",
                "key = German",
                "src",
                "src",
                "src",
                "src",
                blocks="encoder",
                query_from="the German source (encoder)",
            ),
            KindSpec(
                "decoder",
                "Decoder self-attention",
                "query = English output",
                "key = English so far",
                "tgt",
                "tgt",
                "tgt",
                "tgt",
                causal=True,
                blocks="decoder",
                query_from="the English so far (decoder)",
            ),
            KindSpec(
                "cross",
                "Cross-attention",
                "query = English",
                "key = German",
                "tgt",
                "src",
                "tgt",
                "src",
                blocks="decoder",
                query_from="the decoder (English)",
                key_from="the encoder output (German): position {pos} of the memory, the same for every decoder layer",
            ),
        ),
        inputs=("src", "tgt"),
        input_name="German sentence",
        unit="words",
        output="text",
        limit_offset=2,  # <sos> and <eos>
    ),
    net=Translator,
    config=TranslatorConfig,
    recipe="translator.json",
    examples=Examples(
        ablation="ein mann fährt fahrrad .",
        profile="eine frau liest ein buch im park .",
        pair=("ein mann fährt fahrrad .", "eine frau fährt fahrrad ."),
    ),
)
