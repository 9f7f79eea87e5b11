# `make run` and `make test` do all set-up on a fresh machine: a virtualenv in .venv, the
# pinned requirements (re-installed only when a requirements file changes) and, for the
# browser tests, Debian's Chromium.

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# --retries 2: an index that cannot be reached (the PyTorch CPU index on an offline mirror)
# costs a second per package instead of pip's default back-off of several seconds.
PIP_INSTALL := $(PY) -m pip install --retries 2 --progress-bar off --disable-pip-version-check
HOST ?= 127.0.0.1
PORT ?= 8501
# test files run side by side in this many processes (pytest-xdist); 1 runs them in one process
TEST_WORKERS ?= 2
CHROMIUM := /usr/bin/chromium
REDIS_SERVER := /usr/bin/redis-server

.PHONY: run test lint venv deps dev-deps chromium redis-server lexicon clean

run: deps
	$(PY) -m streamlit run serve.py --server.address $(HOST) --server.port $(PORT) --server.headless true

test: dev-deps chromium redis-server
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m pytest -q --timeout=300 -n $(TEST_WORKERS) --dist loadfile tests bench/tests

lint: dev-deps
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

venv: $(PY)

deps: $(VENV)/.installed-runtime

dev-deps: $(VENV)/.installed-dev

$(PY):
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "error: '$(PYTHON) -m venv' failed; install Python 3.11 with venv (Debian: apt-get install python3-venv)" >&2; exit 1; }

$(VENV)/.installed-runtime: requirements.txt | $(PY)
	$(PIP_INSTALL) -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed-runtime
	$(PIP_INSTALL) -r requirements-dev.txt
	touch $@

# The browser tests drive Debian's Chromium through Playwright (no browser download). When it
# is missing and we are root, install it; otherwise say so: those tests then skip with a reason.
chromium:
	@if [ -x $(CHROMIUM) ]; then \
	  exit 0; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y --no-install-recommends chromium \
	    || { apt-get update && apt-get install -y --no-install-recommends chromium; } \
	    || echo "warning: could not install chromium; the browser tests will be skipped" >&2; \
	else \
	  echo "warning: $(CHROMIUM) is missing and we are not root to apt-get it; the browser tests will be skipped" >&2; \
	fi

# The classroom's store tests run against a real Redis (Debian's redis-server, started by the tests
# on a free loopback port, never as a service). Same rule as Chromium: install it when missing.
redis-server:
	@if [ -x $(REDIS_SERVER) ]; then \
	  exit 0; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y --no-install-recommends redis-server \
	    || { apt-get update && apt-get install -y --no-install-recommends redis-server; } \
	    || echo "warning: could not install redis-server; the Redis store tests will be skipped" >&2; \
	else \
	  echo "warning: $(REDIS_SERVER) is missing and we are not root to apt-get it; the Redis store tests will be skipped" >&2; \
	fi

# The rated word list the classifier's fine-tune reads (`--lexicon data/vader_lexicon.txt`, docs/RESULTS.md):
# VADER's (Hutto & Gilbert 2014, MIT licence), taken from its wheel on PyPI into data/ (ignored by git).
LEXICON := data/vader_lexicon.txt
lexicon: $(LEXICON)

$(LEXICON): | $(PY)
	mkdir -p data $(VENV)/wheels
	$(PY) -m pip download --no-deps --retries 2 --disable-pip-version-check -d $(VENV)/wheels vaderSentiment==3.3.2
	$(PY) -c "import glob, zipfile; w = glob.glob('$(VENV)/wheels/vaderSentiment-3.3.2-*.whl')[0]; \
	  open('$@', 'wb').write(zipfile.ZipFile(w).read('vaderSentiment/vader_lexicon.txt'))"

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache test-artifacts
