"""What each model is, said once: its kinds of attention, what they read, its input, its limits, its labels.

Every part of the app that must know how a model differs from another (which attention kinds it has,
which input and vocabulary each axis reads, whether a kind is causal, how long an input may be, what
the prediction is, what the page calls the input) reads one frozen :class:`ModelSpec` instead of asking
``if task == "translator"``. Our three models have one each in :data:`SPECS`; a Hugging Face model gets
one from its config (:func:`model.hub.load.hub_spec`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Output = Literal["classes", "next", "text", "masked", ""]
CAUSAL_LABEL = "decoder"  # what the app calls a causal self-attention, whatever its stored name (STYLE.md 30)


@dataclass(frozen=True)
class KindSpec:
    """One kind of attention of a model: where its queries and keys come from and what hides a key."""

    name: str  # "encoder", "decoder" or "cross": the key of RunResult.kinds
    title: str  # shown above the view
    query_axis: str  # "query = English"
    key_axis: str  # "key = German"
    query_input: str  # the RunResult.inputs entry its query positions read ("ids", "src", "tgt")
    key_input: str
    query_vocab: str = ""  # the Checkpoint.vocabs entry of the query tokens ("" for a Hugging Face model)
    key_vocab: str = ""
    causal: bool = False  # a query sees only itself and earlier keys
    blocks: str = "blocks"  # the attribute of our model that holds this kind's layers
    query_from: str = "the input"  # where a query vector comes from, in words
    key_from: str = ""  # where a key vector comes from, when not the same as the query's

    @property
    def cross(self) -> bool:
        """Queries and keys are different sequences."""
        return self.query_input != self.key_input

    @property
    def label(self) -> str:
        """The kind's one word in captions, charts and tables: "decoder" for every causal self-attention
        (the generator's is stored as "encoder", :attr:`name`, in its checkpoints and heads.json), else
        :attr:`name`."""
        return CAUSAL_LABEL if self.causal and not self.cross else self.name


@dataclass(frozen=True)
class ModelSpec:
    """One model, described once: read everywhere instead of switching on its name."""

    name: str  # "classifier", "generator", "translator", or a Hugging Face id or folder
    title: str  # "Sentiment classifier"
    short: str  # a prefix for URL keys and widget keys ("cls")
    kinds: tuple[KindSpec, ...]
    inputs: tuple[str, ...]  # the RunResult.inputs entries one forward pass takes, in order
    input_name: str  # what the page calls the input, after "the" ("German sentence")
    unit: str  # what the input is counted in: "words", "characters", "tokens"
    output: Output  # the prediction: "classes", "next" (token or character), "text", "masked", "" (none)
    limit_field: str = "max_len"  # the config field that bounds an input
    limit_offset: int = 0  # positions the model adds itself (<sos> and <eos>)
    window: int | None = None  # query/key positions a static heatmap draws, the last ones (None: all)
    max_tokens: int | None = None  # the input limit where it is known outright (a Hugging Face model's)
    data: str = ""  # what it learned from, for people ("SST-2"); "" for a Hugging Face model
    corpus: str = ""  # the head finder's sample it reads by default (a file in model/analysis/corpora)

    @property
    def characters(self) -> bool:
        """The model reads characters: spaces are part of the input and must be kept."""
        return self.unit == "characters"

    @property
    def kind_names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.kinds)

    def kind(self, name: str) -> KindSpec:
        """The kind called ``name``; a ValueError that lists the model's kinds otherwise."""
        for k in self.kinds:
            if k.name == name:
                return k
        raise ValueError(f"the {self.name} has no {name!r} attention; choose one of {', '.join(self.kind_names)}")

    def limit(self, config: Any) -> int:
        """How many words, characters or tokens of input the model reads, from its config."""
        if self.max_tokens is not None:
            return self.max_tokens
        return int(getattr(config, self.limit_field)) - self.limit_offset


SPECS: dict[str, ModelSpec] = {
    "classifier": ModelSpec(
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
    "generator": ModelSpec(
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
    "translator": ModelSpec(
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
}
MODELS = tuple(SPECS)


def spec_for(name: str) -> ModelSpec:
    """The description of our model ``name``; a ValueError that lists them otherwise."""
    if name not in SPECS:
        raise ValueError(f"unknown model {name!r}; choose one of {', '.join(SPECS)}")
    return SPECS[name]


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
