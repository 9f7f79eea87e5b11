"""Fetch a model's files from the Hugging Face Hub into its cache, with progress and clear errors.

Only the files a model needs are fetched (:data:`model.hub.load.FILES`: safetensors weights,
config and tokenizer files; never pickled weights nor code). The Hub is first asked about the
model with a timeout; when it does not answer, a copy already in the Hub cache opens, and
otherwise the user is told to open a local folder.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tqdm.std import tqdm

from model.hub.errors import HubError

TIMEOUT_ENV = "ATTENTION_HUB_TIMEOUT"  # seconds to wait for the Hub before calling it unreachable
DEFAULT_TIMEOUT = 10.0
OFFLINE = "could not reach the Hugging Face Hub; open a local folder instead"

Progress = Callable[[float, str], None]  # (fraction done 0..1, what is happening)


def _timeout() -> float:
    try:
        return float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT


def _bar_class(progress: Progress, start: float, end: float) -> type:
    """A silent tqdm class for ``snapshot_download`` that reports the bytes it fetches. Its byte bars
    grow their totals as files start, so only a fraction larger than the last one is reported."""
    shown = {"fraction": start, "text": ""}

    class Bar(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs.pop("name", None)
            super().__init__(*args, **{**kwargs, "file": io.StringIO(), "disable": False})

        def update(self, n: float | None = 1) -> bool | None:
            displayed = super().update(n)
            if self.unit == "B" and self.total:
                fraction = max(shown["fraction"], start + (end - start) * min(self.n / self.total, 1.0))
                text = f"downloading {self.n / 1e6:.1f} of {self.total / 1e6:.1f} MB"
                if (fraction, text) != (shown["fraction"], shown["text"]):
                    shown.update(fraction=fraction, text=text)
                    progress(fraction, text)
            return displayed

    return Bar


def _endpoint() -> str | None:
    return os.environ.get("HF_ENDPOINT") or None  # read per call, not at import, so tests and scripts can point it


def _cache() -> str | None:
    home = os.environ.get("HF_HOME")
    return os.environ.get("HF_HUB_CACHE") or (str(Path(home) / "hub") if home else None)


@contextmanager
def _hub_errors(repo: str) -> Iterator[None]:
    """The Hub client's exceptions as HubErrors that say what to do."""
    from huggingface_hub import errors as hf

    try:
        yield
    except hf.GatedRepoError as err:
        raise HubError(
            f"{repo} is gated: its authors ask users to accept terms and log in first, which this app "
            "cannot do; download it yourself and open the folder"
        ) from err
    except hf.RepositoryNotFoundError as err:
        raise HubError(
            f"{repo} was not found on the Hugging Face Hub (check the spelling; private models cannot be opened)"
        ) from err
    except hf.RevisionNotFoundError as err:
        raise HubError(f"{repo}: that revision does not exist") from err
    except hf.HFValidationError as err:
        raise HubError(
            f"{repo!r} is not a model id (like gpt2 or Helsinki-NLP/opus-mt-de-en) nor an existing folder"
        ) from err
    except (hf.LocalEntryNotFoundError, hf.OfflineModeIsEnabled) as err:
        raise HubError(OFFLINE) from err
    except (hf.HfHubHTTPError, OSError) as err:
        raise HubError(f"{OFFLINE} ({type(err).__name__}: {err})") from err


def reachable(repo: str) -> bool:
    """Whether the Hub answers about ``repo`` within the timeout (a HubError if it answers "no such
    model" or "gated"); when it does not, only a copy in the Hub cache can open. ``snapshot_download``
    alone would wait without a limit on a network that swallows packets: its first request has no
    timeout."""
    import httpx2
    from huggingface_hub import HfApi
    from huggingface_hub.errors import OfflineModeIsEnabled

    with _hub_errors(repo):
        try:
            HfApi(endpoint=_endpoint()).model_info(repo, timeout=_timeout())
            return True
        except (httpx2.TransportError, OfflineModeIsEnabled):
            return False


def download(
    repo: str, online: bool, patterns: list[str], progress: Progress | None, span: tuple[float, float]
) -> Path:
    """The files of ``repo`` matching ``patterns``, fetched into the Hub cache (or, offline, found there)."""
    from huggingface_hub import snapshot_download

    bar = _bar_class(progress, *span) if progress else None
    with _hub_errors(repo):
        if not online:
            return Path(snapshot_download(repo, allow_patterns=patterns, local_files_only=True, cache_dir=_cache()))
        return Path(
            snapshot_download(
                repo,
                allow_patterns=patterns,
                etag_timeout=_timeout(),
                tqdm_class=bar,
                endpoint=_endpoint(),
                cache_dir=_cache(),
            )
        )
