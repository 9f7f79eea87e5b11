"""The records a model module fills: its description (:class:`ModelSpec`, one :class:`KindSpec` per kind of
attention), the texts the explore pages open on (:class:`Examples`), and the entry that ties them to the
network and its recipe (:class:`ModelEntry`). Data only: the registry is :mod:`model.zoo`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from torch import nn

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


@dataclass(frozen=True)
class Examples:
    """What the explore pages open on for a model. A model without its own opens on these plain English ones:
    every page runs on any text, and the student can type their own."""

    ablation: str = "the acting is wonderful but the plot is thin"  # head ablation's input
    profile: str = "the acting is wonderful but the plot is thin"  # head profiles' input
    pair: tuple[str, str] = ("a good film", "a bad film")  # minimal pairs: one word swapped, the same length


@dataclass(frozen=True)
class ModelEntry:
    """One model of ours, everything the code knows of it in one record: its description, the network its
    checkpoints rebuild (``net(config(**saved))``), the recipe file it was trained by, the examples the pages
    open on. Its default corpus is its description's :attr:`ModelSpec.corpus`."""

    spec: ModelSpec
    net: type[nn.Module]
    config: type  # the network's frozen config dataclass, saved inside each checkpoint
    recipe: str  # its training stages: a file in model/recipes (model.training.replay)
    examples: Examples = Examples()

    @property
    def name(self) -> str:
        return self.spec.name

    def build(self, config: dict[str, Any]) -> nn.Module:
        """The network from a checkpoint's saved config."""
        return self.net(self.config(**config))
