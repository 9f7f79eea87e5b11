"""serve.py: which request paths are page addresses, the script it puts into their HTML, and that its
page list is app.py's (the served behaviour in a real browser: tests/browser/test_serve.py)."""

import json
import subprocess
import sys

import pytest

from serve import BASE_SCRIPT, PAGE_PATHS, ROOT, page_of, with_base


def test_page_paths_are_the_routers_pages():
    """app.py routes every registry entry (pages/__init__.py); serve.py lists the same addresses, and each
    entry's script is a file in its section folder, never directly in pages/."""
    from pages import PAGES

    assert set(PAGE_PATHS) == {p.address for p in PAGES} and {"classifier", "translator"} <= set(PAGE_PATHS)
    assert "in_section(section)" in (ROOT / "app.py").read_text()
    for p in PAGES:
        assert (ROOT / p.script).is_file() and len((ROOT / p.script).relative_to(ROOT / "pages").parts) == 2
    assert not [f.name for f in (ROOT / "pages").glob("*.py") if f.name != "__init__.py"]


@pytest.mark.parametrize(
    "path, base, page",
    [
        ("/classifier", "", "classifier"),
        ("/classifier/", "", "classifier"),
        ("/ablation", "", "ablation"),
        ("/", "", None),  # the start page: no probe to skip
        ("", "", None),
        ("/nope", "", None),  # not a page: Streamlit answers it as before
        ("/_stcore/health", "", None),
        ("/static/js/index.js", "", None),
        ("/classifier/_stcore/health", "", None),  # the probe itself is never answered differently
        ("/media/abc.png", "", None),
        ("/myapp/classifier", "myapp", "classifier"),  # under server.baseUrlPath
        ("/myapp/classifier", "/myapp/", "classifier"),
        ("/classifier", "myapp", None),
        ("/myapp", "myapp", None),
    ],
)
def test_page_of(path, base, page):
    assert page_of(path, base) == page


def test_with_base_goes_before_streamlits_script():
    html = b'<head><script>window.prerenderReady = false</script><script type="module" src="x.js"></script></head>'
    out = with_base(html)
    assert out.count(BASE_SCRIPT.encode()) == 1
    assert out.index(BASE_SCRIPT.encode()) < out.index(b'<script type="module"')
    assert out.replace(BASE_SCRIPT.encode(), b"") == html
    assert with_base(b"<html>no script</html>") == b"<html>no script</html>"  # nothing to put it before


def test_served_config_watches_no_files_and_names_only_real_options():
    """What `make run` serves reads .streamlit/config.toml from the repository root: no file watcher
    (it walks every imported module after each script run), no gc after each run, no magic. Every key
    in the file is one Streamlit knows, so a misspelt option cannot pass for a setting."""
    script = (
        "import json, tomllib; from streamlit import config\n"
        "opts = config.get_config_options(force_reparse=True)\n"
        "keys = [f'{s}.{k}' for s, t in tomllib.load(open('.streamlit/config.toml', 'rb')).items() for k in t]\n"
        "print(json.dumps({k: [opts[k].value if k in opts else None, k in opts, str(opts[k].where_defined) if k in opts else ''] for k in keys}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert all(known for _, known, _ in got.values()), f"unknown options in config.toml: {got}"
    assert all(where.endswith("config.toml") for _, _, where in got.values()), got
    assert got["server.fileWatcherType"][0] == "none"
    assert got["runner.postScriptGC"][0] is False and got["runner.magicEnabled"][0] is False
