"""Tune and train the recommenders on every fold and write their lists (a study's folder, or the committed ones).

Usage: python scripts/recsys_lists.py DATASET [--trials N] [--slow-trials M] [--only NAME ...] [--fold F ...]
                                            [--storage URL [--workers W]] [--out FOLDER | --write-committed]

DATASET is latest-small or 1m.  N TPE trials per fold go to BPRMF, SASRec, KFN, KFN + popularity and ItemKNN, M
(default 0: their defaults) to the PyTorch models UAUM, DESR and PURS; Popularity and Random have nothing to tune.
With --only, just the named recommenders are redone and every other one keeps its committed lists and values
(the committed files are read when the run ends, so runs of different recommenders can go side by side); with
--fold, only those folds are redone, so the folds of a slow recommender can be trained side by side too.
A study writes lists.csv.gz and lists.json into its own folder, --out (default studies/<dataset>/ in the checkout,
git-ignored), never over the committed lists; --write-committed writes them into data/recsys/<dataset>/ instead, the
lists the chapter recommender_reevaluation reads (it tabulates their chosen values, budgets and validation
Recall_acc@10).  lists.json records, per recommender and fold, the trials asked, completed and failed, the storage's
kind (never its URL), the workers, the seeds and Optuna's version.

With --storage (a journal file path, or a database URL such as sqlite:///tuning.db or postgresql://host/db), each
recommender and fold is one Optuna study in that storage, run by W worker processes here (and by any other machine
running the same command with the same URL) until it holds the budget of COMPLETE trials; a killed run resumes where
it stopped.  A relative journal path or SQLite file is inside the --out folder.  The paper's budget: --trials 100
--slow-trials 100 --storage tuning.log --workers 2.  Without --storage, the studies are in memory and seeded, as for
the committed lists.
"""

import argparse
import hashlib
import tempfile
import time
from pathlib import Path

from filelock import FileLock

from recjudge.data.loaders import load_movielens
from recjudge.paths import project_root, temporary_folder_problem
from recjudge.recsys import lists as recsys_lists
from recjudge.recsys import split, tuning
from recjudge.recsys.models import RECOMMENDERS
from recjudge.settings import whole_number
from recjudge.stopping import TERMINATED, Terminated, stops_cleanly

SLOW = ("UAUM", "DESR", "PURS")


def in_folder(storage: str, folder: Path) -> str:
    """``storage`` with a relative journal path or SQLite file placed in ``folder`` (other URLs as given)."""
    if "://" not in storage:
        return storage if Path(storage).expanduser().is_absolute() else str(folder / storage)
    import sqlalchemy.engine
    import sqlalchemy.exc

    try:
        url = sqlalchemy.engine.make_url(storage)
    except sqlalchemy.exc.ArgumentError:
        return storage  # tuning.open_storage names the problem
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:" \
            or url.database.startswith("file:") or Path(url.database).expanduser().is_absolute():
        return storage
    return url.set(database=str(folder / url.database)).render_as_string(hide_password=False)
UNTUNABLE = ("Popularity", "Random")

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("dataset", choices=["latest-small", "1m"])
parser.add_argument("--trials", type=whole_number(1), default=8, metavar="N")
parser.add_argument("--slow-trials", type=whole_number(0), default=0, metavar="M")
parser.add_argument("--only", action="append", choices=sorted(RECOMMENDERS), metavar="NAME")
parser.add_argument("--fold", action="append", type=int, choices=list(split.FOLDS), metavar="F")
parser.add_argument("--storage", metavar="URL", help="shared Optuna storage: a journal file path or a database URL")
parser.add_argument("--workers", type=whole_number(1), default=1, metavar="W",
                    help="worker processes per study (with --storage)")
where = parser.add_mutually_exclusive_group()
where.add_argument("--out", type=Path, metavar="FOLDER",
                   help="the study's folder: its lists, lists.json and a relative --storage (default studies/DATASET)")
where.add_argument("--write-committed", action="store_true",
                   help="write the lists over the committed ones in data/recsys/DATASET (what the chapter reads)")
args = parser.parse_args()
if problem := temporary_folder_problem():  # the workers and the lists' lock need it
    parser.error(problem)
study_folder = (args.out or project_root() / "studies" / args.dataset).resolve()
folder = recsys_lists.committed_folder(args.dataset) if args.write_committed else study_folder
if args.storage:
    if (placed := in_folder(args.storage, study_folder)) != args.storage:
        study_folder.mkdir(parents=True, exist_ok=True)
        args.storage = placed
    try:
        tuning.open_storage(args.storage)
    except ValueError as error:
        parser.error(f"--storage: {error}")
elif args.workers > 1:
    parser.error("--workers needs --storage (the workers share a study through it)")

names = args.only or list(RECOMMENDERS)
budget = {name: 0 if name in UNTUNABLE else args.slow_trials if name in SLOW else args.trials for name in names}
ml = load_movielens(args.dataset)
start = time.monotonic()
try:
    with stops_cleanly():  # SIGTERM or Ctrl-C ends the tuning workers (tuning.optimize_shared) too
        lists, config = recsys_lists.tune_and_produce(
            split.folds(ml.ratings, which=tuple(args.fold or split.FOLDS)), budget, k=20,
            progress=lambda step: print(f"{time.monotonic() - start:7.0f} s  {step}", flush=True),
            storage=args.storage, n_workers=args.workers, dataset=args.dataset)
except (tuning.TuningError, tuning.StorageError) as error:  # workers that failed, a storage that stopped answering
    parser.exit(1, f"recsys_lists.py: {error}\n")
except KeyboardInterrupt as stop:
    parser.exit(TERMINATED if isinstance(stop, Terminated) else 130,
                "recsys_lists.py: stopped; " + ("the studies in --storage keep every finished trial, run again to "
                                                "resume\n" if args.storage else "no lists written\n"))
config["dataset"] = args.dataset
# Read the earlier lists only now, under a lock: runs of other recommenders or folds may have landed meanwhile.
with FileLock(Path(tempfile.gettempdir()) / f"recjudge-lists-{hashlib.sha256(bytes(folder)).hexdigest()[:16]}.lock"):
    if (args.only or args.fold) and (folder / "lists.json").is_file():
        lists, config = recsys_lists.merge(recsys_lists.load_lists(folder), (lists, config))
    recsys_lists.save_lists(lists, folder, config)
print(f"wrote {folder}: {len(lists):,} rows, {time.monotonic() - start:.0f} s")
