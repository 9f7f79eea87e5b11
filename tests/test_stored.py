"""The head finder's stored report read back beside a checkpoint (model.analysis.stored), without Streamlit:
its corpus lines, the note when the corpus changed size, files read afresh when they change, and a copy the
caller may change."""

import json
import os
from pathlib import Path

from model.analysis import stored
from model.analysis.stored import stamps, stored_path, stored_report


def _write(directory: Path, corpus: Path, lines: list[str], sequences: int) -> None:
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = {"source": directory.name, "sequences": sequences, "corpus": str(corpus), "notes": ["as stored"]}
    report["heads"] = [{"kind": "encoder", "layer": 0, "head": 0, "previous": 0.5}]
    directory.mkdir(parents=True, exist_ok=True)
    stored_path(directory).write_text(json.dumps(report), encoding="utf-8")


def test_no_report_is_none(tmp_path):
    assert stored_report(tmp_path / "generator") is None
    assert stamps(tmp_path / "generator") == (None, None)


def test_the_report_comes_with_its_corpus_lines_and_a_note_when_they_changed(tmp_path):
    directory, corpus = tmp_path / "classifier", tmp_path / "corpus.txt"
    _write(directory, corpus, ["a good film", "a bad film"], sequences=2)
    report = stored_report(directory)
    assert report["lines"] == ["a good film", "a bad film"] and report["notes"] == ["as stored"]
    assert report["heads"][0]["previous"] == 0.5

    before = stamps(directory)
    corpus.write_text("a good film\n", encoding="utf-8")
    os.utime(corpus, (before[1] + 5, before[1] + 5))  # a later modification time, whatever the clock's grain
    assert stamps(directory) == (before[0], before[1] + 5)
    report = stored_report(directory)
    assert report["lines"] == ["a good film"]
    assert report["notes"][0] == "as stored" and "the corpus has 1 lines now, not the 2" in report["notes"][1]
    assert f"python -m model heads classifier --examples --json > {stored_path(directory)}" in report["notes"][1]

    corpus.unlink()
    assert stored_report(directory)["lines"] == [] and stamps(directory)[1] is None


def test_each_call_is_a_fresh_copy(tmp_path):
    directory = tmp_path / "translator"
    _write(directory, tmp_path / "c.txt", ["eins", "zwei"], sequences=2)
    first = stored_report(directory)
    first["heads"][0]["previous"] = 9.0
    first["lines"].append("drei")
    first["notes"].append("mine")
    again = stored_report(directory)
    assert (
        again["heads"][0]["previous"] == 0.5 and again["lines"] == ["eins", "zwei"] and again["notes"] == ["as stored"]
    )


def test_a_corpus_path_is_relative_to_the_checkout():
    assert (stored.ROOT / "model" / "analysis" / "corpora").is_dir()
    report = stored_report(stored.ROOT / "checkpoints" / "generator")
    assert report is not None and report["corpus"].startswith("model/") and len(report["lines"]) == report["sequences"]
