"""Tune and train the recommenders on every fold and commit their lists (the chapter's ``retrain`` path retrains).

Usage: python scripts/recsys_lists.py DATASET [--trials N] [--slow-trials M] [--only NAME ...] [--fold F ...]
                                            [--storage URL [--workers W]]

DATASET is latest-small or 1m.  N TPE trials per fold go to BPRMF, SASRec, KFN, KFN + popularity and ItemKNN, M
(default 0: their defaults) to the PyTorch models UAUM, DESR and PURS; Popularity and Random have nothing to tune.
With --only, just the named recommenders are redone and every other one keeps its committed lists and values
(the committed files are read when the run ends, so runs of different recommenders can go side by side); with
--fold, only those folds are redone, so the folds of a slow recommender can be trained side by side too.
Writes data/recsys/<dataset>/lists.csv.gz and lists.json; the chapter recommender_reevaluation tabulates the
chosen values, the budgets and the validation Recall_acc@10 of the committed lists.

With --storage (a journal file path, or a database URL such as sqlite:///tuning.db or postgresql://host/db), each
recommender and fold is one Optuna study in that storage, run by W worker processes here (and by any other machine
running the same command with the same URL) until it holds the budget of COMPLETE trials; a killed run resumes where
it stopped.  The paper's budget: --trials 100 --slow-trials 100 --storage tuning.log --workers 2.  Without
--storage, the studies are in memory and seeded, as for the committed lists.
"""

import argparse
import tempfile
import time
from pathlib import Path

from filelock import FileLock

from recjudge.data.loaders import load_movielens
from recjudge.paths import temporary_folder_problem
from recjudge.recsys import lists as recsys_lists
from recjudge.recsys import split, tuning
from recjudge.recsys.models import RECOMMENDERS
from recjudge.stopping import TERMINATED, Terminated, stops_cleanly

SLOW = ("UAUM", "DESR", "PURS")
UNTUNABLE = ("Popularity", "Random")

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("dataset", choices=["latest-small", "1m"])
parser.add_argument("--trials", type=int, default=8)
parser.add_argument("--slow-trials", type=int, default=0)
parser.add_argument("--only", action="append", choices=sorted(RECOMMENDERS), metavar="NAME")
parser.add_argument("--fold", action="append", type=int, choices=list(split.FOLDS), metavar="F")
parser.add_argument("--storage", metavar="URL", help="shared Optuna storage: a journal file path or a database URL")
parser.add_argument("--workers", type=int, default=1, metavar="W", help="worker processes per study (with --storage)")
args = parser.parse_args()
if problem := temporary_folder_problem():  # the workers and the lists' lock need it
    parser.error(problem)
if args.workers < 1:
    parser.error(f"--workers {args.workers}: give at least 1")
if args.storage:
    try:
        tuning.open_storage(args.storage)
    except ValueError as error:
        parser.error(f"--storage: {error}")
elif args.workers > 1:
    parser.error("--workers needs --storage (the workers share a study through it)")

names = args.only or list(RECOMMENDERS)
budget = {name: 0 if name in UNTUNABLE else args.slow_trials if name in SLOW else args.trials for name in names}
folder = recsys_lists.committed_folder(args.dataset)
ml = load_movielens(args.dataset)
start = time.monotonic()
try:
    with stops_cleanly():  # SIGTERM or Ctrl-C ends the tuning workers (tuning.optimize_shared) too
        lists, config = recsys_lists.tune_and_produce(
            split.folds(ml.ratings, which=tuple(args.fold or split.FOLDS)), budget, k=20,
            progress=lambda step: print(f"{time.monotonic() - start:7.0f} s  {step}", flush=True),
            storage=args.storage, n_workers=args.workers, dataset=args.dataset)
except tuning.TuningError as error:
    parser.exit(1, f"recsys_lists.py: {error}\n")
except KeyboardInterrupt as stop:
    parser.exit(TERMINATED if isinstance(stop, Terminated) else 130,
                "recsys_lists.py: stopped; " + ("the studies in --storage keep every finished trial, run again to "
                                                "resume\n" if args.storage else "no lists written\n"))
config["dataset"] = args.dataset
# Read the committed lists only now, under a lock: runs of other recommenders or folds may have landed meanwhile.
with FileLock(Path(tempfile.gettempdir()) / f"recjudge-lists-{args.dataset}.lock"):
    if (args.only or args.fold) and (folder / "lists.json").is_file():
        lists, config = recsys_lists.merge(recsys_lists.load_lists(folder), (lists, config))
    recsys_lists.save_lists(lists, folder, config)
print(f"wrote {folder}: {len(lists):,} rows, {time.monotonic() - start:.0f} s")
