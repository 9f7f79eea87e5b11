"""The lesson: one ordered path through the app, the single source of the lesson page, the teacher's guide
(on the start page and the Classroom page) and the order of the classroom's questions.

Each :class:`Step` opens one exact state of one page (its address and URL keys: model, input, kind, layer,
head, view, window, snapshot), says in one sentence what to notice there, and asks one :class:`Check`,
graded where it can on what the learner's own input makes the model do (:mod:`model.lessons.checks`).
The heads a step names are read from each checkpoint's ``heads.json`` (the head finder's scores), and the
snapshot where the induction head forms from the generator's ``history.json``: never written by hand, so a
retrained model's path names its own heads. A role no head plays (no ``heads.json``, or a best score under
:data:`model.analysis.heads.PLAYS`) leaves the step without a head, and its sentence says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from model.analysis.heads import PLAYS
from model.core.specs import SPECS
from model.lessons.named_heads import Forming, Head, forming, role_head

SENTENCE = "Life is short, eat dessert first."  # the hand-worked example's sentence
REVIEW = "the acting is wonderful but the plot is thin"  # every word in the classifier's vocabulary
LINE = "But soft, what light through yonder window breaks?"
PHRASE = "To be, or not to be: that is the question."
TWICE = PHRASE + "\n" + PHRASE  # the generator's induction head at work: a phrase written twice
GERMAN = "zwei hunde spielen im schnee ."  # translated word for word: "two dogs play in the snow."
HAND_STEP = 6  # the hand page's step that shows the softmax's weights
KIND_SHORT = {"encoder": "enc", "decoder": "dec", "cross": "cross"}  # the ablation page's switch keys

# check kinds
KEY = "key"  # which key a head's query reads most, graded on a run of the learner's own input
ABLATION = "ablation"  # what a head switched off does to the learner's sentence, graded on the run
WIDTH = "width"  # how wide a head's slice is for the learner's own k and h, graded on the reshape
CHOICE = "choice"  # one of fixed options (where the model has nothing to grade on)


@dataclass(frozen=True)
class Check:
    """One check question, answered in place. ``hints`` come one at a time, from a nudge to nearly the answer.

    A :data:`KEY` check runs ``model`` (``"hand"``: the hand-worked head; else a task) on the learner's text
    (``text`` to start with; ``twice``: the model reads it written twice) and asks which key ``attention``
    head ``layer``/``head`` reads most from a query (``query`` to start with; with ``twice``, counted from the
    start of the second copy). An :data:`ABLATION` check switches that head off on the learner's sentence. A
    :data:`CHOICE` check has ``options`` and ``answer``. ``why`` is said after any answer."""

    kind: str
    question: str
    hints: tuple[str, ...]
    why: str = ""
    model: str = ""
    attention: str = ""
    layer: int = 0
    head: int = 0
    text: str = ""
    query: int = 0
    twice: bool = False
    options: tuple[str, ...] = ()
    answer: int | None = None


@dataclass(frozen=True)
class Step:
    """One step of the path: the page and URL keys of the state it opens, what to notice, its check, the
    minutes a 45-minute class gives it, what the teacher does there and the classroom question it asks."""

    number: int
    title: str
    page: str  # the page's address (pages/__init__.py)
    params: MappingProxyType  # URL key -> value: the exact state
    notice: str
    check: Check
    minutes: int
    teach: str
    room: str | None = None  # a kind of model.lessons.questions.KINDS


# what is known before any checkpoint is read: the step each room question belongs to, and the steps' titles
ROOM_STEPS = {"attend": 1, "shape": 2, "head": 3, "ablation": 4, "previous": 5}
TITLES = (
    "One head, by hand",
    "Every head at once",
    "A trained head reads the word before",
    "Switch that head off",
    "A causal model cannot see ahead",
    "The induction head copies what came next",
    "The moment the induction head forms",
    "Cross-attention lines up a translation",
)


def _explorer(prefix: str, head: Head | None) -> dict[str, str]:
    """The explorer's URL keys that open ``head`` in the heatmap."""
    if head is None:
        return {f"{prefix}_view": "heatmap"}
    return {f"{prefix}_kind": head.kind, f"{prefix}_layer": str(head.layer), f"{prefix}_head": str(head.head)} | {
        f"{prefix}_view": "heatmap"
    }


def _named(head: Head | None, role: str) -> str:
    return head.name if head else f"the {role} head (the head finder has not scored this model yet)"


def lesson_path() -> tuple[Step, ...]:
    """The path, its heads and snapshot read from the checkpoints' head scores and training history."""
    cls_prev = role_head("classifier", "previous")
    gen_prev = role_head("generator", "previous")
    induction = role_head("generator", "induction")
    cross = role_head("translator", "monotonic")
    formed = forming("generator")
    return (
        _hand(),
        _reshape(),
        _classifier(cls_prev),
        _ablation(cls_prev),
        _causal(gen_prev),
        _induction(induction),
        _history(induction, formed),
        _translator(cross),
    )


def _step(number: int, page: str, params: dict, notice: str, check: Check, minutes: int, teach: str) -> Step:
    room = next((k for k, n in ROOM_STEPS.items() if n == number), None)
    return Step(number, TITLES[number - 1], page, MappingProxyType(params), notice, check, minutes, teach, room)


def _hand() -> Step:
    check = Check(
        KEY,
        "Pick a word (the query): which word (key) does this head give its largest weight? "
        "Type a sentence of your own to try another.",
        (
            "Read the query's row of the weights: one number per key.",
            "The softmax keeps the order of the scores: the key with the largest score query · key wins.",
            "On the page, the step “One query in detail” ranks every key for one query.",
        ),
        "The head's weights are random, so the winner is whichever key happens to line up best with the query.",
        model="hand",
        text=SENTENCE,
        query=1,
    )
    params = {"hand_sentence": SENTENCE, "hand_view": "step", "step": str(HAND_STEP)}
    notice = "Each word's row of weights adds up to 1: the softmax turns that word's scores into shares of attention."
    teach = "Work one head on the screen: scores, softmax, weights. Ask the room to predict a row before you show it."
    return _step(1, "hand", params, notice, check, 8, teach)


def _reshape() -> Step:
    check = Check(
        WIDTH,
        "Choose a width k and a number of heads h: how many numbers per word does each head get?",
        (
            "The heads share the width between them: none is as wide as the whole.",
            "Each head gets the same slice of every word's k numbers.",
            "Divide k by h.",
        ),
        "A narrow head works on k / h numbers; one batched product then runs every head at once.",
    )
    params = {"reshape_text": SENTENCE, "reshape_k": "8", "reshape_h": "2", "reshape_kind": "narrow"}
    notice = "One reshape cuts each word's k numbers into h slices, one colour per head, and every head runs at once."
    teach = "Follow the colours through the steps; ask the room what shape comes out of the next step."
    return _step(2, "reshape", params, notice, check, 5, teach)


def _classifier(head: Head | None) -> Step:
    name = _named(head, "previous-token")
    check = Check(
        KEY,
        f"Pick a word of your own sentence: which word does {name} look at from it?",
        (
            "Look just below the diagonal of the map.",
            f"{name} is a previous-token head.",
            "From each word it reads the word right before it.",
        ),
        "A previous-token head copies the word before into each position: layers above can then read word pairs.",
        model="classifier",
        attention=head.kind if head else "encoder",
        layer=head.layer if head else 0,
        head=head.head if head else 0,
        text=REVIEW,
        query=6,
    )
    params = {"cls_text": REVIEW} | _explorer("cls", head)
    score = f" ({head.score:.2f} of each word's weight over the finder's review sentences)" if head else ""
    notice = f"{name} of the sentiment classifier puts its weight on the word just before each word{score}."
    teach = "Ask who can find the head that reads the word before; then the room question on a classifier head."
    return _step(3, "classifier", params, notice, check, 6, teach)


def _ablation(head: Head | None) -> Step:
    name = _named(head, "previous-token")
    check = Check(
        ABLATION,
        f"Type a sentence: with {name} switched off, what happens to the prediction?",
        (
            "Switching a head off removes what it passes to the layers above; its own weights stay.",
            "Compare the prediction before and after on the page.",
            "Try a sentence whose meaning hangs on a pair of words, like “not good”.",
        ),
        "One head is one voice among many: the prediction moves as much as the layers above relied on it.",
        model="classifier",
        attention=head.kind if head else "encoder",
        layer=head.layer if head else 0,
        head=head.head if head else 0,
        text=REVIEW,
    )
    params = {"abl_model": "classifier", f"abl_{SPECS['classifier'].short}_text": REVIEW}
    if head:
        params[f"abl_{SPECS['classifier'].short}_{KIND_SHORT[head.kind]}{head.layer}"] = str(head.head)
    notice = f"With {name} off, the layers above it read a different input: see how far the prediction moves."
    teach = "Ask the room first: will the prediction move? Then switch the head off and reveal."
    return _step(4, "ablation", params, notice, check, 5, teach)


def _causal(head: Head | None) -> Step:
    name = _named(head, "previous-token")
    check = Check(
        CHOICE,
        "Which weights of the generator's map are always 0?",
        (
            "The generator writes one character at a time, left to right.",
            "When it writes a character, the ones after it do not exist yet.",
            "A row is one character asking; the columns to its right come later in the text.",
        ),
        "Above the diagonal the keys come after the query: the causal mask hides them, so their weight is 0.",
        options=(
            "above the diagonal: characters after the query",
            "below the diagonal: characters before the query",
            "on the diagonal: each character itself",
        ),
        answer=0,
    )
    params = {"gen_prompt": LINE, "gen_chars": "40"} | _explorer("gen", head)
    notice = f"The hatched half is the future, which no character sees; {name} reads the character just before."
    teach = "Ask the room which head is the previous-token head; then show the hatched future."
    return _step(5, "generator", params, notice, check, 5, teach)


def _induction(head: Head | None) -> Step:
    name = _named(head, "induction")
    check = Check(
        KEY,
        f"Type a short phrase: the model reads it written twice. From the character picked in the second copy, "
        f"which character does {name} look at?",
        (
            "Look back into the first copy.",
            "Find the same character in the first copy.",
            "The head reads the character just after that earlier copy: what came next last time.",
        ),
        "An induction head finds this character earlier in the text and reads what followed it there: the model "
        "can then copy that next character.",
        model="generator",
        attention=head.kind if head else "encoder",
        layer=head.layer if head else 0,
        head=head.head if head else 0,
        text=PHRASE,
        query=PHRASE.index("q"),  # a character the phrase has once: one earlier copy to find
        twice=True,
    )
    params = {"gen_prompt": TWICE, "gen_chars": str(len(TWICE))} | _explorer("gen", head)
    notice = (
        f"In the second copy, {name} looks at the character that followed the same character in the first copy: "
        "a stripe parallel to the diagonal."
    )
    teach = "Let the room say what the stripe means before you name it: reading what came next last time."
    return _step(6, "generator", params, notice, check, 6, teach)


def _history(head: Head | None, formed: Forming | None) -> Step:
    name = _named(head, "induction")
    params = {"hist_task": "generator", "hist_view": "head"}
    if formed and formed.probe:
        params["hist_probe"] = formed.probe
    if head:
        params |= {"hist_kind": head.kind, "hist_layer": str(head.layer), "hist_head": str(head.head)}
    if formed is None:
        check = Check(
            CHOICE,
            "What does a head's score in training tell you?",
            ("Each snapshot scored every head.",),
            "How strongly the head did its role at that snapshot.",
            options=("how strongly it does its role at that snapshot", "how large its weights are"),
            answer=0,
        )
        notice = "Scrub the snapshots: heads go from blurry to sharp as the loss falls."
        return _step(7, "history", params, notice, check, 6, "Scrub the snapshots with the room.")
    params["hist_epoch"] = str(formed.snapshot)
    picks = sorted({formed.snapshots[0], formed.before, formed.snapshot, formed.snapshots[-1]})
    loss = (
        f" and the loss on repeated text falls from {formed.loss_before:.2f} to {formed.loss:.2f}"
        if formed.loss is not None and formed.loss_before is not None
        else ""
    )
    check = Check(
        CHOICE,
        f"At which snapshot does {name} first score at least {PLAYS} as an induction head, and keep it?",
        (
            "Move the slider one snapshot at a time and watch the stripe.",
            "The loss on repeated text falls at the same moment.",
            f"Compare snapshots {formed.before} and {formed.snapshot}.",
        ),
        f"At snapshot {formed.before} it scored {formed.score_before:.2f}; at snapshot {formed.snapshot}, "
        f"{formed.score:.2f}{loss}. The head formed in one step, not gradually.",
        options=tuple(f"snapshot {e}" for e in picks),
        answer=picks.index(formed.snapshot),
    )
    notice = (
        f"Step the slider back one snapshot and forward again: {name}'s stripe appears at once, and so does the "
        "model's skill at repeated text."
    )
    teach = "Scrub back and forth across the jump with the room: the head and the loss change together."
    return _step(7, "history", params, notice, check, 6, teach)


def _translator(head: Head | None) -> Step:
    name = _named(head, "alignment")
    check = Check(
        KEY,
        f"Type a German sentence and pick an English word of the translation: which German word does {name} "
        "read most for it?",
        (
            "Cross-attention: each English word (a row) reads the German words (the columns).",
            "The strongest weights run down the map in sentence order.",
            "The German word it reads is usually the one it translates.",
        ),
        "This head lines up each English word with the German word it translates, in order.",
        model="translator",
        attention=head.kind if head else "cross",
        layer=head.layer if head else 0,
        head=head.head if head else 0,
        text=GERMAN,
        query=1,
    )
    params = {"tr_text": GERMAN} | _explorer("tr", head)
    notice = f"In {name}, each English word reads the German word it translates: the weights line up in order."
    teach = "Ask the room to predict the map for one English word, then show it; end with a summary of the path."
    return _step(8, "translator", params, notice, check, 4, teach)


def step_of(kind: str) -> int | None:
    """The number of the step whose classroom question is ``kind``."""
    return ROOM_STEPS.get(kind)


def total_minutes(path: tuple[Step, ...]) -> int:
    return sum(s.minutes for s in path)
