"""`recjudge run --jobs 1` vs `--jobs N`: wall time, and whether the two give the same outputs.

Both execute the same runs with ``--force`` into the committed book (``results/``, ``book/notebooks/``), one after the
other, replaying the LLM store (``RECJUDGE_LLM_MODE=replay`` unless set; datasets from ``RECJUDGE_DATA_MIRROR``).
Printed side by side: seconds, whether each run's tables (``results/<run>/``, bytes) and executed notebook (cells and
outputs, without papermill's timestamps: ``runplan.executed_content``) equal those of ``--jobs 1``, and whether
``git status`` shows ``results/`` as committed. By default three non-LLM chapters (cheap); ``--full`` runs the whole run
plan (at_a_glance after the chapters it reads), which is the figure to quote from an idle machine.

    python benchmarks/bench_run_jobs.py [--jobs 2] [--only NAME ...] [--full]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from recjudge.compendium.runplan import OUTPUT_DIR, executed_content, load_runplan
from recjudge.paths import project_root

#: Chapters that ask no LLM (or only replay it) and take seconds to minutes: the default, cheap measurement.
CHEAP = ("data_tour", "normalised_surprise", "metamorphic_recommender")


def outputs(root: Path, names: list[str]) -> dict[str, str]:
    """sha256 of each run's tables and of its executed notebook's content."""
    digests = {}
    for name in names:
        for path in sorted((root / "results" / name).rglob("*")):
            if path.is_file():
                digests[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
        notebook = root / OUTPUT_DIR / f"{name}.ipynb"
        digests[str(notebook.relative_to(root))] = hashlib.sha256(executed_content(notebook).encode()).hexdigest()
    return digests


def results_changed(root: Path) -> list[str]:
    status = subprocess.run(["git", "status", "--porcelain", "--", "results"], cwd=root, capture_output=True,
                            text=True, check=True).stdout
    return status.splitlines()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="the N compared with 1 (default 2)")
    parser.add_argument("--only", action="append", metavar="NAME", help=f"runs to execute (default: {CHEAP})")
    parser.add_argument("--full", action="store_true", help="every run of the run plan")
    args = parser.parse_args()
    root = project_root()
    names = [run.name for run in load_runplan(root=root)] if args.full else list(args.only or CHEAP)
    only = [] if args.full else [flag for name in names for flag in ("--only", name)]
    environment = {**os.environ, "RECJUDGE_LLM_MODE": os.environ.get("RECJUDGE_LLM_MODE", "replay")}
    print(f"runs: {', '.join(names)}; LLM mode {environment['RECJUDGE_LLM_MODE']}; data mirror "
          f"{os.environ.get('RECJUDGE_DATA_MIRROR') or '(none)'}; {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f} at the start")
    rows = []
    for jobs in (1, args.jobs):
        started = time.perf_counter()
        command = [sys.executable, "-m", "recjudge", "run", "--force", *only, "--jobs", str(jobs)]
        status = subprocess.run(command, cwd=root, env=environment).returncode
        rows.append((jobs, time.perf_counter() - started, status, outputs(root, names), results_changed(root)))
    reference = rows[0][3]
    print(f"\n{'--jobs':>6} {'wall s':>8} {'exit':>4} {'same outputs as --jobs 1':>26} {'results/ as committed':>22}")
    for jobs, seconds, status, digests, changed in rows:
        differing = sorted(key for key in reference.keys() | digests.keys() if reference.get(key) != digests.get(key))
        same = "(the reference)" if jobs == 1 else "yes" if not differing else f"no: {len(differing)} file(s)"
        committed = "yes" if not changed else f"no: {len(changed)} file(s)"
        print(f"{jobs:>6} {seconds:>8.1f} {status:>4} {same:>26} {committed:>22}")
        for key in differing:
            print(f"{'':>8}differs: {key}")
        for line in changed:
            print(f"{'':>8}git status: {line}")
    print(f"\nspeed-up x{rows[0][1] / rows[1][1]:.2f} with --jobs {args.jobs}; load average {os.getloadavg()[0]:.1f} "
          "at the end (other processes on the machine take their share)")
    return 0 if all(row[2] == 0 for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
