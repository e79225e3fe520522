"""The run plan: which notebooks, with which parameters, make up the book (``runplan.yaml``).

Its modules, one concern each (lowest first; each imports only those above it):

- ``run``           what a run is (``Run``), the plan's errors, and the names and folders the others share
- ``parameters``    a notebook's declared parameters and the checks a run's parameters pass against them
- ``plan``          reading ``runplan.yaml`` and its profiles; the judge convention (``with_judges``)
- ``fingerprints``  what a run's outputs depend on, hashed, and the run cache: what is stale and why
- ``execution``     executing the notebooks with papermill (``--jobs``, failures), and what would run and why
- ``command``       ``recjudge run``: parses arguments and calls the others

``recjudge run`` executes every run with papermill (kernel ``python3``, working directory = project root) into
``book/notebooks/<name>.ipynb``. A run is skipped when its *input fingerprint* is unchanged since its last
successful execution and its output notebook and its tables (``results/<name>/``, each file's hash recorded as the run
wrote it) are still those that execution wrote (``execution.why_stale``; a table edited by hand is written again). The
fingerprint covers what can change a notebook's outputs:

- the source notebook file and the run's parameters;
- the package source (``src/recjudge/**``: Python files, prompt templates, package data);
- the files of every dataset the run declares (sha256 of each registry file found in the dataset folder; a dataset
  that is not available is recorded as ``"missing"``, so fetching it later triggers a re-run);
- the LLM response store: for the book's own runs the committed ``data/llm/**`` (or ``$RECJUDGE_STORE``), for a
  variant's runs also the reader's store ``variants/store/**`` (``recjudge.paths.store_layers``);
- the result tables of the earlier runs it reads (``results_of``), so a summary page re-runs when a chapter's
  numbers change.

Jupyter Book's own execution cache keys only on cell text, which is why the book does not execute notebooks itself.
``recjudge run --jobs N`` executes up to N runs at once, each kernel held to its share of the CPUs' threads; a run
that reads other runs' tables (``results_of``) starts after them. The outputs are those of an execution in order.
Fingerprints live in ``.runplan-cache/`` (git-ignored); a failed run leaves its partially executed notebook in
``.runplan-cache/failed/`` and never overwrites the last good output.

Failed judgments.  Each run's kernel gets env ``RECJUDGE_FAILURE_LOG`` (``.runplan-cache/failures/<run>.jsonl``), to
which every judge job with failed judgments (a server that stopped, refusals, retries run out) appends a line
(``recjudge.llm.report.log_failures``).  A run with failures is executed (its tables leave those judgments out) but
not done: it says how many failed and of which kind, keeps no skip record (the next invocation executes it again and
asks only what is missing), and ``recjudge run`` exits with status 4 unless ``--allow-failures`` is given.

Run plan format::

    runs:
      - name: data_tour                  # output book/notebooks/data_tour.ipynb; used by --only
        notebook: notebooks/data_tour.md
        parameters: {sample_size: 100}      # names must exist in the notebook's `parameters` cell
        datasets: [movielens-latest-small]  # dataset names of recjudge.data.REGISTRY the notebook reads
        timeout: 600                        # optional: seconds allowed per cell
        results_of: [proxy_vs_llm]          # optional: earlier runs whose results/<name>/ tables it reads
        variant: synthetic                  # optional: runs the cells tagged only:synthetic (see cell_selection)
        asks_llm: true                      # optional: the notebook asks an LLM judge (it takes --judge)
        reads_logprobs: true                # optional: a reader's judge plays a role that reads expected scores
                                            #   from token log-probabilities (judges without them are left out)
    profiles:                             # optional: scales of the whole book (recjudge run --profile NAME)
      smoke:                              # profile name -> run name -> parameter overrides
        proxy_vs_llm: {sample_size: 10}

Profiles.  ``default`` is the book as committed and has no overrides (its results are the committed ones); other
profiles (``paper``: the papers' populations; ``smoke``: a few prompts per chapter) override parameters of named
runs, checked against the notebook's parameters cell like the run's own. Resolution: ``load_runplan(profile=P)``;
an unknown profile is an error listing the ones the plan defines. They live in the run plan, not in code, so a
chapter's scales sit beside its default parameters.

The judge convention.  Every chapter that asks an LLM (``asks_llm: true``) takes the judges a reader brings through
ONE parameter, ``judges``: a list of ``recjudge.llm.judge_spec.JudgeSpec.to_parameter()`` dicts (``label``,
``provider``, ``model`` and, when set, ``served_model``, ``base_url``, ``temperature``, ``seed``, ``options``,
``batch``), read back with ``JudgeSpec.from_parameter`` and put into each of the chapter's LLM roles with
``to_config(prompt=..., scoring=..., max_tokens=..., runs=...)``. A chapter asks them beside its own judge(s); the
default of ``judges`` in the notebook is ``[]``, so the committed book passes nothing. At a profile other than
``default`` only the reader's judges are asked: the kernels get env ``RECJUDGE_LLM_ASK_ONLY`` naming them, so the
chapters' own judges take the store's replies and leave the rest out (``recjudge.llm.runner``; each chapter's page in
the variant's book names them, ``variant_book.left_out_judgments``); ``--with-book-judges`` asks them too.
Every job's summary line goes to ``<cache>/jobs/<run>.jsonl`` (env ``RECJUDGE_JOB_LOG``), which ``recjudge run``
sums per judge when it ends (``judge_summary``). ``recjudge run --judge SPEC``
passes ``judges`` to every run that asks an LLM and whose notebook declares it (``with_judges``; every chapter of
the book does); a run that asks an LLM but does not declare it is named and left out of the judged run (papermill
rejects undeclared parameters, and running it would only repeat the default judge under the reader's name); a page
that reads the judged runs' tables (``results_of``) and asks no LLM runs again with them (``with_summaries``), given
``judges`` too when it declares it (the at-a-glance page finds each judge's rows by its label). Such
runs write into a variant (``recjudge.compendium.variants``), never into ``results/`` or ``book/notebooks/``.
"""

from recjudge.compendium.runplan.command import (
    SUMMARY_COUNTS,
    add_arguments,
    judge_summary,
    rescaled_runs,
    run_command,
)
from recjudge.compendium.runplan.execution import (
    EXIT_FAILED_JUDGMENTS,
    KERNEL_NAME,
    RUN_PARAMETERS_HEADING,
    RunOutcome,
    Target,
    describe_plan,
    execute_notebook,
    execute_plan,
    executed_content,
    executed_from,
    job_log_path,
    reading_log_path,
)
from recjudge.compendium.runplan.fingerprints import (
    FINGERPRINT_VERSION,
    FileHasher,
    RunCache,
    changed_components,
    dataset_fingerprint,
    fingerprint,
    fingerprint_hash,
    store_fingerprint,
)
from recjudge.compendium.runplan.parameters import (
    RESULTS_FOLDER_PARAMETER,
    DeclaredDefault,
    declared_defaults,
    parameter_names,
    parameter_problem,
    read_source_notebook,
)
from recjudge.compendium.runplan.plan import (
    JudgedRuns,
    load_runplan,
    profile_names,
    with_judges,
    with_summaries,
)
from recjudge.compendium.runplan.run import (
    ASK_ONLY_ENV,
    CACHE_DIR,
    DEFAULT_PROFILE,
    JUDGES_PARAMETER,
    MODE_ENV,
    NOTEBOOK_SUFFIXES,
    OUTPUT_DIR,
    RUNPLAN_FILE,
    Run,
    RunFailedError,
    RunPlanError,
)

__all__ = [
    "RUN_PARAMETERS_HEADING",
    "RUNPLAN_FILE",
    "CACHE_DIR",
    "OUTPUT_DIR",
    "KERNEL_NAME",
    "NOTEBOOK_SUFFIXES",
    "FINGERPRINT_VERSION",
    "DEFAULT_PROFILE",
    "JUDGES_PARAMETER",
    "RunPlanError",
    "RunFailedError",
    "Run",
    "load_runplan",
    "profile_names",
    "RESULTS_FOLDER_PARAMETER",
    "DeclaredDefault",
    "declared_defaults",
    "parameter_problem",
    "JudgedRuns",
    "with_judges",
    "with_summaries",
    "read_source_notebook",
    "parameter_names",
    "FileHasher",
    "dataset_fingerprint",
    "fingerprint",
    "store_fingerprint",
    "fingerprint_hash",
    "changed_components",
    "RunOutcome",
    "Target",
    "job_log_path",
    "reading_log_path",
    "EXIT_FAILED_JUDGMENTS",
    "MODE_ENV",
    "ASK_ONLY_ENV",
    "RunCache",
    "execute_notebook",
    "executed_content",
    "execute_plan",
    "describe_plan",
    "executed_from",
    "add_arguments",
    "rescaled_runs",
    "run_command",
    "SUMMARY_COUNTS",
    "judge_summary",
]
