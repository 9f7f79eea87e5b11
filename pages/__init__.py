"""The app's pages, described once: the registry that app.py's router, the start page's cards and the
tests read.

Every page script lives in a section folder (``home``, ``lessons``, ``models``, ``explore``, ``teach``)
beside its own parts; ``shared/`` holds what two or more pages use and ``router/`` what app.py adds to
every page (the sidebar, lesson links). No page script sits directly in ``pages/``: Streamlit's legacy
multipage mode, which runs on a fresh server's first request when a ``pages/`` folder stands beside the
entry script, lists only ``pages/*.py``, so it finds no page of ours to run or to name in a menu.

Every page has one shape: module-level functions, then a single ``main()`` call as its last line.
``main()`` writes the title and introduction; a page with controls draws them in ``options()``, which
returns what they chose as one immutable value, and ``body(...)`` draws what depends on it. A widget
bound to the URL is drawn and read in one call (``pages.shared.state.url_widget`` and the pickers beside
it); the prefixes of a page's URL keys are its registry entry's ``url_keys``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout


@dataclass(frozen=True)
class PageInfo:
    """One page: where it lives, what it is called, what it is for."""

    address: str  # its URL path (/classifier)
    title: str  # the navigation's title
    section: str  # its folder under pages/
    purpose: str  # one line: what the page is for (the start page's cards)
    icon: str  # a Material icon
    url_keys: tuple[str, ...] = ()  # prefixes of the URL keys it writes (others leave the URL on a page change)
    text_key: str | None = None  # the URL key of its main text, where a link may set it (the head finder's)
    heading: str | None = None  # the title the page writes at its top, when it is not ``title``

    @property
    def shown_heading(self) -> str:
        """The title the page writes at its top."""
        return self.heading or self.title

    @property
    def script(self) -> str:
        """The page script, relative to the checkout (what st.Page and AppTest open)."""
        return f"pages/{self.section}/{self.address}.py"


# section folder -> the heading the menu shows above its pages (home's two, the start page and the lesson, stand
# alone)
SECTIONS = {"home": "", "lessons": "Lessons", "models": "Models", "explore": "Explore", "teach": "Teaching a room"}

PAGES = (
    PageInfo(
        "start",
        "Start here",
        "home",
        "What the app teaches and the way through it.",
        ":material/home:",
        heading="Attention Explorer",
    ),
    PageInfo(
        "lesson",
        "The lesson",
        "home",
        "Eight steps, one way through: from one head by hand to a translation, a check at every step.",
        ":material/route:",
        ("lesson_step",),
        heading="The lesson: attention in eight steps",
    ),
    PageInfo(
        "hand",
        "Self-attention by hand",
        "lessons",
        "One head on one sentence, every number shown: queries, keys, scores, softmax, context.",
        ":material/edit_note:",
        ("hand_", "step"),
    ),
    PageInfo(
        "reshape",
        "Multi-head reshape",
        "lessons",
        "How one batched computation runs every head at once, coloured by head.",
        ":material/view_column:",
        ("reshape_",),
    ),
    PageInfo(
        "classifier",
        "Sentiment classifier",
        "models",
        "A trained encoder reads a sentence: which words each head looks at.",
        ":material/sentiment_satisfied:",
        ("cls_",),
        "cls_text",
    ),
    PageInfo(
        "generator",
        "Shakespeare generator",
        "models",
        "A causal model writes character by character; the mask hides the future.",
        ":material/history_edu:",
        ("gen_",),
        "gen_prompt",
    ),
    PageInfo(
        "translator",
        "Translator (de → en)",
        "models",
        "Encoder, decoder and cross-attention: which German word each English word reads.",
        ":material/translate:",
        ("tr_", "trhub_"),
        "tr_text",
        "Translator (German → English)",
    ),
    PageInfo(
        "any_model",
        "Any model (Hugging Face)",
        "models",
        "GPT-2, BERT, a Marian translator or your own folder, in the same explorer.",
        ":material/hub:",
        ("hub_",),
        "hub_text",
    ),
    PageInfo(
        "ablation",
        "Head ablation",
        "explore",
        "Switch heads off and watch the prediction move.",
        ":material/block:",
        ("abl_",),
    ),
    PageInfo(
        "pairs",
        "Minimal pairs",
        "explore",
        "Change one word and compare the attention.",
        ":material/compare_arrows:",
        ("pair",),
    ),
    PageInfo(
        "profiles",
        "Head profiles",
        "explore",
        "What each head tends to do, in a few numbers.",
        ":material/insights:",
        ("pro_", "proex_"),
    ),
    PageInfo(
        "heads",
        "Head finder",
        "explore",
        "Every head scored over a corpus: previous-token, first-token, induction heads and more.",
        ":material/search:",
        ("heads_",),
    ),
    PageInfo(
        "history",
        "Training history",
        "explore",
        "Heads going from blurry to sharp, snapshot by snapshot, beside the loss.",
        ":material/timeline:",
        ("hist_",),
    ),
    PageInfo(
        "workshop",
        "Workshop: predict, then reveal",
        "teach",
        "Guess where attention goes, then see it: alone or for a room.",
        ":material/school:",
        ("q", "ws_"),
    ),
    PageInfo(
        "classroom",
        "Classroom",
        "teach",
        "A live room: students join by code or QR, vote on a question, see the reveal together.",
        ":material/groups:",
        ("room", "teacher", "crk_", "crr_"),
    ),
)
BY_ADDRESS = {p.address: p for p in PAGES}


def page(address: str) -> PageInfo:
    """The registry entry of the page at ``address`` (a KeyError names the addresses there are)."""
    if address not in BY_ADDRESS:
        raise KeyError(f"no page {address!r}; the pages are {', '.join(BY_ADDRESS)}")
    return BY_ADDRESS[address]


def heading(address: str) -> str:
    """What the page at ``address`` writes as its title (``st.title(heading("hand"))``)."""
    return page(address).shown_heading


def in_section(section: str) -> list[PageInfo]:
    return [p for p in PAGES if p.section == section]
