"""Trials per hour of a shared Optuna study (``recjudge.recsys.tuning.tune_shared``) with 1 and with 2 worker
processes, side by side, for a cheap recommender (ItemKNN) and a costlier one (BPRMF) on one fold of ml-latest-small.

Each configuration is a fresh study in a journal file in a temporary folder, run to ``--trials`` COMPLETE trials; the
wall time includes opening the storage, forking the workers and refitting the best trial's model (what a run of
``scripts/recsys_lists.py --storage`` pays per recommender and fold).  The figures depend on the machine and on what
else runs on it: the load average is printed beside them.

    RECJUDGE_DATA_MIRROR=../shared/data python benchmarks/bench_tuning_workers.py [--trials 8] [--fold 0]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import optuna

from recjudge.data import load_movielens
from recjudge.recsys import split, tuning
from recjudge.recsys.models import RECOMMENDERS
from recjudge.settings import whole_number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="latest-small")
    parser.add_argument("--fold", type=int, default=split.FOLDS[0], choices=list(split.FOLDS))
    parser.add_argument("--trials", type=whole_number(1), default=8, help="COMPLETE trials per study")
    parser.add_argument("--recommenders", default="ItemKNN,BPRMF", help="comma-separated names")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    args = parser.parse_args()

    fold = split.folds(load_movielens(args.dataset).ratings, which=(args.fold,))[0]
    print(f"{args.dataset}, fold {args.fold}: {len(fold.train):,} training positives, "
          f"{fold.valid['user_id'].nunique():,} validation users; {args.trials} COMPLETE trials per study; "
          f"{os.cpu_count()} CPUs")
    rows = []
    for name in args.recommenders.split(","):
        for workers in (int(w) for w in args.workers.split(",")):
            with tempfile.TemporaryDirectory() as folder:
                url = str(Path(folder) / "bench.log")
                load_before = os.getloadavg()[0]
                start = time.perf_counter()
                params, recall, _ = tuning.tune_shared(name, fold, args.trials, url, "bench", workers,
                                                       seed=args.fold, base=RECOMMENDERS[name].defaults)
                seconds = time.perf_counter() - start
                study = optuna.load_study(study_name="bench", storage=tuning.open_storage(url))
                complete = sum(t.state == optuna.trial.TrialState.COMPLETE for t in study.get_trials())
            rows.append((name, workers, complete, seconds, 3600 * complete / seconds, recall, load_before))
            print(f"  {name:8s} {workers} worker(s): {complete} trials in {seconds:7.1f} s", flush=True)

    print(f"\n{'recommender':12s} {'workers':>7s} {'trials':>6s} {'wall s':>8s} {'trials/h':>9s} "
          f"{'speed-up':>8s} {'best R@10':>9s} {'load':>5s}")
    single = {name: per_hour for name, workers, _, _, per_hour, _, _ in rows if workers == 1}
    for name, workers, complete, seconds, per_hour, recall, load in rows:
        speedup = per_hour / single[name] if name in single else float("nan")
        print(f"{name:12s} {workers:7d} {complete:6d} {seconds:8.1f} {per_hour:9.0f} {speedup:8.2f} {recall:9.4f} "
              f"{load:5.1f}")


if __name__ == "__main__":
    main()
