"""What each model is, said once: its kinds of attention, what they read, its input, its limits, its labels.

Every part of the app that must know how a model differs from another (which attention kinds it has,
which input and vocabulary each axis reads, whether a kind is causal, how long an input may be, what
the prediction is, what the page calls the input) reads one frozen :class:`ModelSpec` instead of asking
``if task == "translator"``. Our models have one each, in their modules in :mod:`model.zoo` (where the
records live too), read here as :data:`SPECS`; a Hugging Face model gets one from its config (:func:`hub_spec`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from model import zoo
from model.zoo.records import CAUSAL_LABEL, KindSpec, ModelSpec, Output

__all__ = ["CAUSAL_LABEL", "HUB_OUTPUTS", "SPECS", "KindSpec", "ModelSpec", "Output", "hub_spec", "spec_for"]


class _Specs(Mapping[str, ModelSpec]):
    """Our models' descriptions by name: a read of the registry (:data:`model.zoo.MODELS`) each time."""

    def __getitem__(self, name: str) -> ModelSpec:
        return zoo.MODELS[name].spec

    def __iter__(self) -> Iterator[str]:
        return iter(zoo.MODELS)

    def __len__(self) -> int:
        return len(zoo.MODELS)


SPECS: Mapping[str, ModelSpec] = _Specs()  # each model's description: its module in model/zoo holds it


def __getattr__(name: str) -> tuple[str, ...]:
    """``MODELS``: our models' names in the registry's order, read from it at each import (a page script,
    run again on every rerun, sees a model registered since)."""
    if name == "MODELS":
        return tuple(zoo.MODELS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def spec_for(name: str) -> ModelSpec:
    """The description of our model ``name``; a ValueError that lists them otherwise."""
    return zoo.model_entry(name).spec


def kind_label(model: str, kind: str) -> str:
    """The display word of attention ``kind`` of ``model`` (:attr:`KindSpec.label`): stored rows (heads.json,
    an Explanation, RunResult.kinds) name the generator's causal self-attention "encoder", and every caption
    and table shows "decoder". A Hugging Face model's kinds, and names no model has, are shown as they are."""
    spec = SPECS.get(model)
    if spec is None or kind not in spec.kind_names:
        return kind
    return spec.kind(kind).label


# a Hugging Face model's prediction head -> what its prediction is
HUB_OUTPUTS: dict[str, Output] = {
    "masked-lm": "masked",
    "classifier": "classes",
    "causal-lm": "next",
    "seq2seq": "text",
    "base": "",
}


def hub_spec(
    name: str, shape: str, head: str, max_tokens: int, source: str = "source", output: str = "output"
) -> ModelSpec:
    """The description of a Hugging Face model from what its config says: ``shape`` ("encoder", "decoder",
    "encoder-decoder"), its prediction ``head`` (:data:`HUB_OUTPUTS`) and its longest input; an
    encoder-decoder's axes call its two sequences ``source`` and ``output`` (e.g. "German (source)")."""
    encoder = KindSpec("encoder", "Self-attention", "query", "key", "ids", "ids", query_from="the text")
    decoder = KindSpec(
        "decoder",
        "Causal self-attention",
        "query",
        "key (earlier tokens)",
        "ids",
        "ids",
        causal=True,
        query_from="the text so far",
    )
    if shape == "encoder":
        kinds, inputs = (encoder,), ("ids",)
    elif shape == "decoder":
        kinds, inputs = (decoder,), ("ids",)
    elif shape == "encoder-decoder":
        kinds = (
            KindSpec(
                "encoder",
                "Encoder self-attention",
                f"query = {source}",
                f"key = {source}",
                "src",
                "src",
                query_from="the source (encoder)",
            ),
            KindSpec(
                "decoder",
                "Decoder self-attention",
                f"query = {output}",
                f"key = {output} so far",
                "tgt",
                "tgt",
                causal=True,
                query_from="the output so far (decoder)",
            ),
            KindSpec(
                "cross",
                "Cross-attention",
                f"query = {output}",
                f"key = {source}",
                "tgt",
                "src",
                query_from="the decoder (output)",
                key_from="the encoder's output",
            ),
        )
        inputs = ("src", "tgt")
    else:
        raise ValueError(f"unknown model shape {shape!r}; expected encoder, decoder or encoder-decoder")
    if head not in HUB_OUTPUTS:
        raise ValueError(f"unknown prediction head {head!r}; expected one of {', '.join(HUB_OUTPUTS)}")
    return ModelSpec(
        name=name,
        title=name,
        short="hub",
        kinds=kinds,
        inputs=inputs,
        input_name="text",
        unit="tokens",
        output=HUB_OUTPUTS[head],
        max_tokens=max_tokens,
    )
