"""Dataset download and parsing against a real HTTP server on loopback."""

from __future__ import annotations

import gzip
import threading
import urllib.error
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from model.training import data

DE = ["Ein Mann läuft.", "Zwei Hunde spielen im Schnee.", "Eine Frau liest."]
EN = ["A man runs.", "Two dogs play in the snow.", "A woman reads."]
SST = ["1 a gorgeous , witty , seductive movie .", "", "0 the plot is nothing but boilerplate clichés ."]
SHAKESPEARE = "First Citizen:\nBefore we proceed any further, hear me speak.\n" * 5


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves a directory; a path under /truncated/ promises more bytes than it sends."""

    def log_message(self, format: str, *args) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/truncated/"):
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"only the first bytes")
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A loopback HTTP server (random free port) over small files named like the real sources."""
    root = tmp_path_factory.mktemp("served")
    (root / "multi30k").mkdir()
    for lang, lines in (("de", DE), ("en", EN)):
        (root / "multi30k" / f"val.{lang}.gz").write_bytes(gzip.compress("\n".join(lines).encode() + b"\n"))
    (root / "multi30k" / "test_2016_flickr.de.gz").write_bytes(gzip.compress("\n".join(DE).encode()))
    (root / "multi30k" / "test_2016_flickr.en.gz").write_bytes(gzip.compress("\n".join(EN[:2]).encode()))
    (root / "sst2").mkdir()
    (root / "sst2" / "dev.txt").write_text("\n".join(SST) + "\n", encoding="utf-8")
    (root / "sst2" / "train.txt").write_text("positive a bad label line\n", encoding="utf-8")
    (root / "tinyshakespeare").mkdir()
    (root / "tinyshakespeare" / "input.txt").write_text(SHAKESPEARE, encoding="utf-8")

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def mirror(served: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """$ATTENTION_DATA_BASE_URL points at the server, $ATTENTION_DATA_DIR at an empty directory."""
    base, root = served
    target = tmp_path / "data"
    monkeypatch.setenv(data.BASE_URL_ENV, base)
    monkeypatch.setenv(data.DATA_ENV, str(target))
    return target, root


def files_under(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


def test_data_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(data.DATA_ENV, str(tmp_path / "env"))
    assert data.data_dir(tmp_path / "flag") == tmp_path / "flag"
    assert data.data_dir() == tmp_path / "env"
    monkeypatch.delenv(data.DATA_ENV)
    assert data.data_dir().name in ("data",)


def test_source_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(data.BASE_URL_ENV, raising=False)
    assert data.source_url("sst2/dev.txt").startswith("https://")
    monkeypatch.setenv(data.BASE_URL_ENV, "http://127.0.0.1:9/mirror/")
    assert data.source_url("multi30k/val.de.gz") == "http://127.0.0.1:9/mirror/multi30k/val.de.gz"
    with pytest.raises(ValueError, match="unknown dataset file"):
        data.source_url("sst2/nope.txt")


def test_data_file_downloads_once_and_completely(mirror: tuple[Path, Path]) -> None:
    target, root = mirror
    path = data.data_file("multi30k/val.de.gz", quiet=True)
    assert path == target / "multi30k" / "val.de.gz"
    assert path.read_bytes() == (root / "multi30k" / "val.de.gz").read_bytes()
    assert files_under(target) == ["multi30k/val.de.gz"]  # no temporary files left behind
    # a second call uses the local copy: change it and the change stays
    path.write_bytes(gzip.compress(b"local\n"))
    assert data.data_file("multi30k/val.de.gz", quiet=True).read_bytes() == gzip.compress(b"local\n")


def test_explicit_directory_wins(mirror: tuple[Path, Path], tmp_path: Path) -> None:
    target, _ = mirror
    explicit = tmp_path / "explicit"
    path = data.data_file("sst2/dev.txt", explicit, quiet=True)
    assert path == explicit / "sst2" / "dev.txt" and path.is_file()
    assert not target.exists()


def test_load_multi30k(mirror: tuple[Path, Path]) -> None:
    de, en = data.load_multi30k("val")
    assert de == DE and en == EN


def test_load_multi30k_checks_line_counts(mirror: tuple[Path, Path]) -> None:
    with pytest.raises(ValueError, match="3 German lines but 2 English lines"):
        data.load_multi30k("test_2016_flickr")


def test_load_sst2(mirror: tuple[Path, Path]) -> None:
    assert data.load_sst2("dev") == [
        (1, "a gorgeous , witty , seductive movie ."),
        (0, "the plot is nothing but boilerplate clichés ."),
    ]


def test_load_sst2_bad_line_says_where(mirror: tuple[Path, Path]) -> None:
    with pytest.raises(ValueError, match="line 1: expected 'label sentence'"):
        data.load_sst2("train")


def test_load_shakespeare_splits_90_10(mirror: tuple[Path, Path]) -> None:
    train, val = data.load_shakespeare()
    n = int(0.9 * len(SHAKESPEARE))
    assert train == SHAKESPEARE[:n] and val == SHAKESPEARE[n:]
    assert train + val == SHAKESPEARE


def test_missing_remote_file_raises_and_leaves_nothing(mirror: tuple[Path, Path], tmp_path: Path) -> None:
    target, root = mirror
    assert not (root / "multi30k" / "train.de.gz").exists()
    with pytest.raises(urllib.error.HTTPError) as info:
        data.data_file("multi30k/train.de.gz", quiet=True)
    assert info.value.code == 404
    assert files_under(target) == []
    assert not (target / "multi30k" / "train.de.gz").exists()


def test_cut_off_download_raises_and_leaves_nothing(served: tuple[str, Path], tmp_path: Path) -> None:
    base, _ = served
    dest = tmp_path / "cut" / "input.txt"
    with pytest.raises(OSError):  # urllib's ContentTooShortError is an OSError
        data.download(f"{base}/truncated/input.txt", dest, quiet=True)
    assert not dest.exists()
    assert files_under(tmp_path / "cut") == []


def test_read_lines_plain_and_gzip(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\r\ntwo\n", encoding="utf-8")
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(b"one\ntwo\n"))
    assert data.read_lines(tmp_path / "a.txt") == ["one", "two"]
    assert data.read_lines(tmp_path / "a.txt.gz") == ["one", "two"]
