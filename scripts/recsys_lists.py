"""Train every recommender on every fold and commit the lists (the chapter's ``retrain`` path does the same).

Usage: python scripts/recsys_lists.py [DATASET] [TRIALS]   (DATASET: latest-small (default) or 1m; TRIALS per
recommender and fold for the fast recommenders BPRMF, ItemKNN, KFN; the PyTorch models and SASRec keep their
defaults).  Writes data/recsys/<dataset>/lists.csv.gz and lists.json (the chosen values; the chapter
recommender_reevaluation tabulates them with the validation Recall_acc@10 of the committed lists).
"""

import sys

import pandas as pd

from recjudge.compendium.paths import project_root as repo_root
from recjudge.data.loaders import load_movielens
from recjudge.recsys import lists as recsys_lists
from recjudge.recsys import split, tuning
from recjudge.recsys.metrics import recall_at_k
from recjudge.recsys.models import RECOMMENDERS

dataset = sys.argv[1] if len(sys.argv) > 1 else "latest-small"
trials = int(sys.argv[2]) if len(sys.argv) > 2 else 8
TUNED = ("BPRMF", "ItemKNN", "KFN")
ml = load_movielens(dataset)
folds = split.folds(ml.ratings)
rows, params_by_fold = [], {}
for fold in folds:
    params_by_fold[fold.fold] = {}
    for name in RECOMMENDERS:
        n = trials if name in TUNED else 0
        params, recall = tuning.tune(name, fold, n, seed=fold.fold) if n else ({}, float("nan"))
        params = {**RECOMMENDERS[name].defaults, **params}
        params_by_fold[fold.fold][name] = params
        rows.append({"recommender": name, "fold": fold.fold, "trials": n, "params": params, "valid_recall10": recall})
        print(fold.fold, name, n, params, round(recall, 4), flush=True)

frames = [recsys_lists.produce_lists([fold], params_by_fold[fold.fold], k=20) for fold in folds]
lists = pd.concat(frames, ignore_index=True)
for row in rows:
    if row["trials"] == 0:
        fold = next(f for f in folds if f.fold == row["fold"])
        mine = lists[(lists["recommender"] == row["recommender"]) & (lists["fold"] == row["fold"])
                     & (lists["part"] == "valid")]
        row["valid_recall10"] = recall_at_k(mine, fold.valid, 10)
root = repo_root()
config = {"dataset": dataset, "k": 20, "seed": "fold number", "trials": trials, "tuned": list(TUNED),
          "params": {str(f): p for f, p in params_by_fold.items()}}
recsys_lists.save_lists(lists, root / "data" / "recsys" / dataset, config)
print(tuning.tuned_values(rows).to_string(index=False))
print("done")
