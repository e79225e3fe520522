"""Peak memory of ``recjudge judge`` on a million list rows, everything before the judge is asked.

Generates (fixed seed, synthetic) LISTS.csv with 50,000 users x 20 ranks = 1,000,000 rows from a catalogue of
3,000 items, ITEMS.csv, and HISTORY.csv with 30 earlier interactions per user, then runs ``recjudge judge`` in a
child process in replay mode against an empty response store: the command reads and checks the inputs, builds every
prompt, hashes every store key and looks it up, then stops with "missing replies" (exit 3) having asked nothing.
Printed: the child's peak resident memory (max RSS) and its wall time.

    python benchmarks/bench_judge_cli.py [--users 50000] [--ranks 20] [--items 3000] [--history 30]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

GENRES = ("Action", "Comedy", "Drama", "Horror", "Romance", "Thriller", "Documentary", "Animation")


def write_inputs(folder: Path, users: int, ranks: int, n_items: int, history: int, seed: int = 0) -> list[Path]:
    rng = np.random.default_rng(seed)
    item_ids = np.array([f"i{n}" for n in range(n_items)])
    items = pd.DataFrame({
        "item_id": item_ids,
        "name": [f"Synthetic film {n} ({1950 + n % 70})" for n in range(n_items)],
        "categories": ["|".join(rng.choice(GENRES, size=1 + n % 3, replace=False)) for n in range(n_items)],
    })
    user_ids = np.array([f"u{n}" for n in range(users)])
    # each user's list: `ranks` distinct items (a random window of a random permutation)
    order = rng.permutation(n_items)
    starts = rng.integers(0, n_items - ranks - history, size=users)
    window = starts[:, None] + np.arange(ranks + history)[None, :]
    picked = order[window]
    lists = pd.DataFrame({
        "recommender": "synthetic",
        "user_id": np.repeat(user_ids, ranks),
        "rank": np.tile(np.arange(1, ranks + 1), users),
        "item_id": item_ids[picked[:, :ranks].ravel()],
    })
    past = pd.DataFrame({
        "user_id": np.repeat(user_ids, history),
        "item_id": item_ids[picked[:, ranks:].ravel()],
        "timestamp": rng.integers(10**9, 10**9 + 10**7, size=users * history),
    })
    paths = [folder / "lists.csv", folder / "items.csv", folder / "history.csv"]
    for frame, path in zip((lists, items, past), paths):
        frame.to_csv(path, index=False)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=50_000)
    parser.add_argument("--ranks", type=int, default=20)
    parser.add_argument("--items", type=int, default=3_000)
    parser.add_argument("--history", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lists, items, history = write_inputs(folder, args.users, args.ranks, args.items, args.history)
        command = [sys.executable, "-m", "recjudge", "judge", str(lists), "--items", str(items), "--history",
                   str(history), "--judge", "openai:gpt-4o-mini", "--mode", "replay", "--store",
                   str(folder / "store"), "--out", str(folder / "out")]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    if done.returncode != 3:
        sys.exit(f"expected exit 3 (missing replies), got {done.returncode}:\n{done.stderr[-2000:]}")
    rows = args.users * args.ranks
    print(f"recjudge judge on {rows:,} list rows ({args.users:,} users x {args.ranks} ranks, {args.items:,} items, "
          f"{args.history} history rows per user), replay with an empty store: peak memory {peak_mib:,.0f} MiB, "
          f"{seconds:.1f} s")


if __name__ == "__main__":
    main()
