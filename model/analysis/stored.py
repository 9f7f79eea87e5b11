"""The head finder's report stored beside a checkpoint (``<checkpoint>/heads.json``, written by ``python -m model
heads TASK --examples --json``), read back with the corpus lines it was computed on.

The report names its corpus (a path relative to the checkout, or absolute); :func:`stored_report` adds that
corpus's lines as ``"lines"`` and, when the corpus no longer has the number of lines the scores were computed
on, a note saying so and the command that recomputes them. Files are read once per modification time;
:func:`stamps` gives those times, for a caller that keeps reports in a cache of its own (the pages).
"""

from __future__ import annotations

import copy
import json
import os
from functools import lru_cache
from pathlib import Path

from model.analysis.head_scan import CORPORA, corpus_lines

HEADS_FILE = "heads.json"
ROOT = CORPORA.parents[2]  # the checkout: a report's corpus path is relative to it


def stored_path(directory: str | os.PathLike) -> Path:
    """Where the finder's report of the checkpoint in ``directory`` is stored."""
    return Path(directory) / HEADS_FILE


@lru_cache(maxsize=8)
def _read_json(path: str, mtime: float) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


@lru_cache(maxsize=8)
def _read_lines(path: str, mtime: float) -> tuple[str, ...]:
    return tuple(corpus_lines(Path(path).read_bytes(), name=Path(path).name))


def _corpus(report: dict) -> Path:
    return ROOT / report.get("corpus", "")


def _mtime(path: Path) -> float | None:
    return path.stat().st_mtime if path.is_file() else None


def stamps(directory: str | os.PathLike) -> tuple[float | None, float | None]:
    """The modification times of the stored report and of its corpus (None where a file is missing): a
    report read again after either changes is read afresh."""
    path = stored_path(directory)
    if not path.is_file():
        return None, None
    return path.stat().st_mtime, _mtime(_corpus(_read_json(str(path), path.stat().st_mtime)))


def stored_report(directory: str | os.PathLike) -> dict | None:
    """The scores stored beside the checkpoint in ``directory`` with their corpus lines (``"lines"``, empty when
    the corpus file is gone) and, where the corpus has changed size since, a note; None when none is stored.
    A fresh copy each call: the caller may change it."""
    path = stored_path(directory)
    if not path.is_file():
        return None
    report = copy.deepcopy(_read_json(str(path), path.stat().st_mtime))
    corpus = _corpus(report)
    report["lines"] = list(_read_lines(str(corpus), corpus.stat().st_mtime)) if corpus.is_file() else []
    if len(report["lines"]) != report["sequences"]:
        command = f"python -m model heads {Path(directory).name} --examples --json > {path}"
        report["notes"] = [
            *report.get("notes", []),
            f"the corpus has {len(report['lines'])} lines now, not the {report['sequences']} these scores were "
            f"computed on: recompute them with {command}",
        ]
    return report
