"""The attention explorer's Python side: the payload (shapes, dtype, masks, token labels), its packing
for the component, the URL state and its clamping, the click check, the standalone HTML export and the
script joined from the ES modules."""

from __future__ import annotations

import base64
import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fixtures.explorer_runs import MARKUP, classifier_run, generator_run, rollout_of, translator_run
from model.core.results import AttentionKind, attention_kind, causal
from pages.shared.explorer import _prefix, checked_cell
from tests.apptest import ROOT
from viz.explorer import (
    clamp_state,
    display_token,
    explorer_html,
    explorer_payload,
    kind_weights,
    pack_payload,
    script_json,
    state_from_url,
    state_to_url,
    unpack_payload,
    weights_array,
)
from viz.explorer.assets import JS, join_modules, script

HARNESS = ROOT / "tests" / "browser" / "explorer_app.py"

# ---- payload -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kinds",
    [translator_run(), translator_run(src=5, tgt=11, layers=3, heads=4), classifier_run(), generator_run(n=40)],
    ids=["translator", "translator-5x11", "classifier", "generator"],
)
def test_payload_holds_every_weight_in_order(kinds) -> None:
    payload = explorer_payload(kinds)
    flat = weights_array(payload)
    open_cells = lambda k: k.weights[..., np.broadcast_to(np.asarray(k.mask, bool), k.weights.shape[-2:])].size
    assert flat.dtype == np.dtype("<f4") and flat.size == sum(open_cells(k) for k in kinds)  # masked cells not sent
    assert [m["name"] for m in payload["kinds"]] == [k.name for k in kinds]
    for meta, k in zip(payload["kinds"], kinds):
        L, H, Tq, Tk = k.weights.shape
        assert (meta["layers"], meta["heads"], len(meta["queries"]), len(meta["keys"])) == (L, H, Tq, Tk)
        assert meta["packed"] == (not np.all(k.mask))
        np.testing.assert_array_equal(kind_weights(payload, meta), k.weights)  # float32 both ways: bit for bit
        assert (meta["query_axis"], meta["key_axis"], meta["title"]) == (k.query_axis, k.key_axis, k.title)
        assert meta["special"] == list(k.special) and meta["cross"] == k.cross
    assert all(re.fullmatch(r"#[0-9A-Fa-f]{6}", c) for c in payload["head_colors"])
    json.dumps({key: v for key, v in payload.items() if key != "weights"})  # the header is plain JSON


def test_masks_are_one_character_per_cell() -> None:
    enc, dec, cross = explorer_payload(translator_run(tgt=6))["kinds"]
    assert set(enc["mask"]) == {"1"} and set(cross["mask"]) == {"1"}
    grid = np.array([c == "1" for c in dec["mask"]]).reshape(6, 6)
    np.testing.assert_array_equal(grid, causal(6))
    (cls,) = explorer_payload(classifier_run(n=5))["kinds"]
    rows = [cls["mask"][i * 5 : (i + 1) * 5] for i in range(5)]
    assert rows == ["11110"] * 5  # the padding key is masked for every query


def test_translator_axes_name_the_languages() -> None:
    _, _, cross = explorer_payload(translator_run())["kinds"]
    assert (cross["query_axis"], cross["key_axis"]) == ("query = English", "key = German")
    assert cross["cross"] is True


@pytest.mark.parametrize(
    "token, shown",
    [
        ("word", "word"),
        (MARKUP, MARKUP),  # markup stays text: the browser draws it with textContent / fillText
        ("\u202eevil", "⟨U+202E⟩evil"),  # a bidi override cannot reorder the page
        ("a\u200db", "a⟨U+200D⟩b"),  # zero-width joiner
        ("\n", "⏎"),
        ("\t", "⇥"),
        ("\u00a0", "⟨U+00A0⟩"),  # a no-break space is invisible too
        (" ", "␣"),
        ("", "∅"),
        ("é", "é"),
        ("e\u0301", "e\u0301"),  # a combining accent stays on its letter
    ],
)
def test_display_token(token: str, shown: str) -> None:
    assert display_token(token) == shown


def test_payload_sends_display_labels_and_keeps_repeats() -> None:
    enc = explorer_payload(translator_run())["kinds"][0]
    assert "⟨U+202E⟩evil" in enc["keys"] and not any("\u202e" in t for t in enc["keys"])
    assert enc["keys"].count("ein") == 2 and MARKUP in enc["queries"]


def test_rollout_goes_with_the_encoder() -> None:
    kinds = translator_run()
    r = rollout_of(kinds[0])
    payload = explorer_payload(kinds, rollout=r)
    assert payload["rollout"]["kind"] == "encoder"
    start = payload["rollout"]["offset"]
    np.testing.assert_array_equal(weights_array(payload)[start:].reshape(r.shape), r)
    with pytest.raises(ValueError, match="rollout has shape"):
        explorer_payload(kinds, rollout=r[:-1])


def test_bad_input_says_what_to_fix() -> None:
    with pytest.raises(ValueError, match="at least one kind"):
        explorer_payload([])
    enc = translator_run()[0]
    with pytest.raises(ValueError, match="unique"):
        explorer_payload([enc, enc])
    n = 1025  # 13 layers × 12 heads past 1,024 tokens: more than MAX_WEIGHTS (no memory: a broadcast zero)
    zeros = np.broadcast_to(np.float32(0), (13, 12, n, n))
    huge = AttentionKind("encoder", "", zeros, ["a"] * n, ["a"] * n, "q", "k", np.ones((n, n), bool), [False] * n)
    with pytest.raises(ValueError, match="shorter input"):
        explorer_payload([huge])


def test_digest_changes_with_the_data_only() -> None:
    a, b = explorer_payload(translator_run(seed=3)), explorer_payload(translator_run(seed=3), title="other")
    assert a["digest"] == b["digest"]
    assert explorer_payload(translator_run(seed=4))["digest"] != a["digest"]


# ---- packing for the component -------------------------------------------------------------------


def test_pack_round_trip_aligns_the_floats() -> None:
    payload = explorer_payload(translator_run(), rollout=rollout_of(translator_run()[0]), title=MARKUP)
    blob = pack_payload(payload, projector=True, url_prefix="cls_")
    assert blob[:4] == b"AEX1" and len(blob) % 4 == 0
    n = int.from_bytes(blob[4:8], "little")
    assert (8 + n) % 4 == 0  # the browser reads the floats straight after the header
    back = unpack_payload(blob)
    assert back["weights"] == payload["weights"] and back["projector"] is True and back["url_prefix"] == "cls_"
    assert {k: v for k, v in back.items() if k not in ("projector", "url_prefix")} == payload
    with pytest.raises(ValueError, match="AEX1"):
        unpack_payload(b"nope" + blob[4:])


def test_packed_size_is_four_bytes_a_weight_plus_a_small_header() -> None:
    kinds = translator_run(src=25, tgt=25, layers=6, heads=8)
    blob = pack_payload(explorer_payload(kinds))
    floats = 6 * 8 * (25 * 25 + 25 * 26 // 2 + 25 * 25)  # the decoder's masked cells (above the diagonal) stay home
    assert floats * 4 < len(blob) < floats * 4 + 8_000


# ---- state and the URL ---------------------------------------------------------------------------


def test_clamp_state_keeps_what_exists() -> None:
    kinds = translator_run(layers=2, heads=3)
    assert clamp_state(kinds, None) == {"kind": "encoder", "layer": 0, "head": 0, "view": "heatmap"}
    assert clamp_state(kinds, {"kind": "cross", "layer": "1", "head": 2, "view": "lines"}) == {
        "kind": "cross",
        "layer": 1,
        "head": 2,
        "view": "lines",
    }
    # a smaller run keeps the kind and view, and the nearest layer and head it has
    assert clamp_state(kinds, {"kind": "cross", "layer": 5, "head": 7, "view": "grid"}) == {
        "kind": "cross",
        "layer": 1,
        "head": 2,
        "view": "grid",
    }
    bad = {"kind": "nope", "layer": "x", "head": "-3", "view": "<script>"}
    assert clamp_state(kinds, bad) == {"kind": "encoder", "layer": 0, "head": 0, "view": "heatmap"}


def test_rollout_view_needs_a_rollout_of_that_kind() -> None:
    kinds = translator_run()
    assert clamp_state(kinds, {"view": "rollout"})["view"] == "heatmap"  # no rollout at all
    assert clamp_state(kinds, {"view": "rollout"}, "encoder")["view"] == "rollout"
    assert clamp_state(kinds, {"kind": "cross", "view": "rollout"}, "encoder")["view"] == "mean"


@pytest.mark.parametrize("prefix", ["cls", "cls_"])
def test_url_round_trip(prefix: str) -> None:
    kinds = translator_run()
    state = {"kind": "decoder", "layer": 1, "head": 2, "view": "mean"}
    url = state_to_url(state, prefix)
    assert url == {"cls_kind": "decoder", "cls_layer": "1", "cls_head": "2", "cls_view": "mean"}
    assert clamp_state(kinds, state_from_url({**url, "other": "x"}, prefix)) == state
    # AppTest-style lists, and keys of another prefix ignored
    assert state_from_url({"cls_layer": ["0", "1"], "tr_layer": "9"}, prefix) == {"layer": "1"}


def test_payload_state_is_the_clamped_url_state() -> None:
    payload = explorer_payload(classifier_run(layers=2, heads=4), state={"layer": "7", "head": "3", "view": "lines"})
    assert payload["state"] == {"kind": "encoder", "layer": 1, "head": 3, "view": "lines"}


# ---- the click ----------------------------------------------------------------------------------


def test_a_click_is_checked_and_its_weight_read_from_the_run() -> None:
    kinds = translator_run()
    cell = {"kind": "cross", "layer": 1, "head": 2, "query": 3, "key": 4, "weight": 123.0}
    got = checked_cell(kinds, cell)
    assert got == {**cell, "weight": pytest.approx(float(kinds[2].weights[1, 2, 3, 4]))}
    mean = checked_cell(kinds, {**cell, "head": None})
    assert mean["head"] is None and mean["weight"] == pytest.approx(float(kinds[2].weights[1, :, 3, 4].mean()))
    r = rollout_of(kinds[0])
    roll = checked_cell(kinds, {**cell, "kind": "encoder", "layer": None, "head": None}, r)
    assert roll["weight"] == pytest.approx(float(r[3, 4]))


@pytest.mark.parametrize(
    "change",
    [
        {"kind": "nope"},
        {"kind": ["cross"]},
        {"layer": 2},
        {"head": -1},
        {"query": 8},
        {"key": "1"},
        {"key": True},
        {"layer": None},
        {"query": None},
    ],
)
def test_a_click_that_does_not_fit_the_run_is_dropped(change) -> None:
    cell = {"kind": "cross", "layer": 1, "head": 2, "query": 3, "key": 4, "weight": 0.1}
    assert checked_cell(translator_run(), {**cell, **change}) is None


@pytest.mark.parametrize("raw", ["", "1cls", "cls-x", "a b", "<x>"])
def test_url_prefix_must_be_a_plain_name(raw: str) -> None:
    with pytest.raises(ValueError, match="url_prefix"):
        _prefix(raw)
    assert _prefix("cls") == _prefix("cls_") == "cls_"


def test_no_click_is_none() -> None:
    assert checked_cell(translator_run(), None) is None and checked_cell(translator_run(), "x") is None


# ---- the standalone HTML --------------------------------------------------------------------------


class _Parsed(HTMLParser):
    """Every start tag, and whether each element that was opened was closed."""

    VOID = {"meta", "br", "img", "link", "input", "hr"}

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.open: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.open.append(tag)
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def test_export_is_one_well_formed_offline_file() -> None:
    kinds = translator_run()
    kinds.append(attention_kind("extra", kinds[0].weights, ["</script><script>alert(1)</script>"] * 8, kinds[0].keys))
    title = "Run <b>one</b> & </script>"
    html = explorer_html(explorer_payload(kinds, rollout=rollout_of(kinds[0])), title)
    parsed = _Parsed()
    parsed.feed(html)
    parsed.close()
    assert parsed.open == [] and html.startswith("<!DOCTYPE html>")
    scripts = [attrs for tag, attrs in parsed.tags if tag == "script"]
    assert [s.get("type") for s in scripts] == ["application/json", "module"] and not any("src" in s for s in scripts)
    assert not [t for t, _ in parsed.tags if t in ("link", "img", "iframe")]
    # nothing to fetch; the SVG export's namespace names (svg.js) are identifiers, never fetched
    assert not re.search(r"https?://(?!www\.w3\.org/(?:2000/svg|XML/1998/namespace)\b)", html)
    assert "<b>one</b>" not in html and "Run &lt;b&gt;one&lt;/b&gt; &amp; &lt;/script&gt;" in html
    assert "needs the app" in html
    data = json.loads(parsed.scripts[0])  # the data script ended where it should, and parses back
    assert [m["name"] for m in data["kinds"]] == ["encoder", "decoder", "cross", "extra"]
    assert data["kinds"][3]["queries"][0] == "</script><script>alert(1)</script>"
    assert MARKUP in data["kinds"][0]["queries"] and MARKUP not in parsed.scripts[0]
    assert base64.b64decode(data["weights_b64"]) == explorer_payload(kinds, rollout=rollout_of(kinds[0]))["weights"]
    assert "mountStandalone(" in parsed.scripts[1]


def test_script_json_cannot_end_a_script() -> None:
    value = {"t": ["</script>", "<!--", "a&b", "\u2028", "</SCRIPT >"]}
    text = script_json(value)
    assert not set("<>&\u2028") & set(text) and json.loads(text) == value


# ---- the page side (AppTest on the browser tests' harness) -----------------------------------------


def harness_data(query: dict[str, str]) -> dict:
    """The explorer's packed data as the harness page sends it, for a URL with ``query``."""
    at = AppTest.from_file(str(HARNESS), default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception
    (element,) = at.get("bidi_component")
    assert [b.proto.label for b in at.get("download_button")] == ["Download as interactive HTML"]
    return unpack_payload(element.proto.bytes)


def test_the_page_starts_from_the_url_clamped() -> None:
    data = harness_data({"case": "translator", "t_kind": "cross", "t_layer": "9", "t_view": "lines", "x_head": "2"})
    assert data["state"] == {"kind": "cross", "layer": 1, "head": 0, "view": "lines"}
    assert data["url_prefix"] == "t_" and data["projector"] is False
    assert [m["name"] for m in data["kinds"]] == ["encoder", "decoder", "cross"]
    np.testing.assert_array_equal(weights_array(data)[: 2 * 3 * 64], translator_run()[0].weights.ravel())


def test_the_page_passes_projector_mode_and_the_rollout() -> None:
    data = harness_data({"case": "classifier", "projector": "1", "t_view": "rollout"})
    assert data["projector"] is True and data["rollout"]["kind"] == "encoder"
    assert data["state"]["view"] == "rollout"


# ---- the script: the ES modules joined ----------------------------------------------------------------


def test_the_script_is_every_module_once_in_dependency_order() -> None:
    text = script()
    order = re.findall(r"^// ---- (\S+)$", text, re.M)
    assert sorted(order) == sorted(p.name for p in JS.glob("*.js"))  # every module is reached, once
    for name in order:  # a module comes after the ones it imports; the entry last
        for imported in re.findall(r'^import .* from "\./(\S+)";$', (JS / name).read_text(encoding="utf-8"), re.M):
            assert order.index(imported) < order.index(name), (imported, name)
    assert order[-1] == "main.js"
    assert not re.search(r"^import ", text, re.M)
    assert re.findall(r"^export .*", text, re.M) == ["export default function (component) {"]  # the entry's only


def test_join_modules_drops_imports_and_exports(tmp_path) -> None:
    (tmp_path / "b.js").write_text("// b\nexport const x = 1, y = 2;\nexport function f() { return x + y; }\n")
    (tmp_path / "a.js").write_text('import { f, y } from "./b.js";\n\nexport default function () { return f() + y; }\n')
    assert join_modules(tmp_path, "a.js") == (
        "// ---- b.js\n// b\nconst x = 1, y = 2;\nfunction f() { return x + y; }\n\n"
        "// ---- a.js\nexport default function () { return f() + y; }\n"
    )


def test_join_modules_follows_imports_from_another_folder_once(tmp_path) -> None:
    """Paths are relative to the importing module, as a browser reads them: the matrix view takes its SVG
    nodes from the explorer's folder, and a module two importers reach by different paths is joined once."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "app").mkdir()
    (tmp_path / "shared" / "c.js").write_text("export const c = 3;\n")
    (tmp_path / "shared" / "n.js").write_text('import { c } from "./c.js";\nexport function n() { return c; }\n')
    (tmp_path / "app" / "b.js").write_text('import { c } from "../shared/c.js";\nexport const b = c;\n')
    (tmp_path / "app" / "a.js").write_text(
        'import { b } from "./b.js";\nimport { n } from "../shared/n.js";\nexport default function () { return b + n(); }\n'
    )
    joined = join_modules(tmp_path / "app", "a.js")
    assert re.findall(r"^// ---- (.*)$", joined, re.M) == ["../shared/c.js", "b.js", "../shared/n.js", "a.js"]
    assert joined.count("const c = 3;") == 1


@pytest.mark.parametrize(
    "a, b, error",
    [
        ('import * as b from "./b.js";', "export const x = 1;", "write imports as"),
        ('import { z } from "./b.js";', "export const x = 1;", r"imports \['z'\] from b.js"),
        (
            'import { x } from "./b.js";',
            'import { a } from "./a.js";\nexport const x = 1;',
            "import cycle: a.js -> b.js -> a.js",
        ),
        ('import { x } from "./b.js";', "export default function () {}\nexport const x = 1;", "only the entry"),
        (
            'import { x } from "./b.js";\nconst helper = 1;',
            "export const x = 1;\nfunction helper() {}",
            "helper is declared",
        ),
    ],
)
def test_join_modules_refuses_what_the_joined_script_would_change(tmp_path, a: str, b: str, error: str) -> None:
    (tmp_path / "a.js").write_text(a + "\nexport default function () {}\n")
    (tmp_path / "b.js").write_text(b + "\n")
    with pytest.raises(ValueError, match=error):
        join_modules(tmp_path, "a.js")


def test_no_script_under_viz_holds_a_thousand_line_class() -> None:
    sizes = {
        str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "viz").rglob("*.js")
    }
    assert sizes and max(sizes.values()) <= 400, sizes
