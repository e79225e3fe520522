"""Time the whole one-plus-random pass (Algorithm 1 of Lima & Peres) over all eligible users of ml-latest-small.

Runs every model x distance cell (13 cells x 3 recommenders) once with one process and once spread over the cores
with joblib, prints each cell's seconds and both wall times side by side with the machine's load, and checks that
the two passes give identical results. ml-latest-small has no frame that meets the paper's eligibility threshold of
30 common users, so the threshold is a parameter (default 8, the notebook's; ``--min-common-users``).

    RECJUDGE_DATA_MIRROR=../shared/data python benchmarks/bench_one_plus_random.py [--pairs U:cosine,N:npmi]
"""

from __future__ import annotations

import argparse
import os
import time

import pandas as pd

from recjudge.data import load_movielens
from recjudge.surprise import item_models, one_plus_random, time_frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="latest-small")
    parser.add_argument("--min-common-users", type=int, default=8)
    parser.add_argument("--pairs", default="", help="comma-separated model:distance list (default: all 13)")
    parser.add_argument("--max-intervals", type=int, default=None)
    parser.add_argument("--max-users", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes of the parallel pass")
    parser.add_argument("--supplementary", action="store_true", help="no sampling, greedy selection")
    args = parser.parse_args()

    t0 = time.perf_counter()
    data = load_movielens(args.dataset)
    intervals = time_frames.eligible_intervals(data.ratings, min_common_users=args.min_common_users)
    if args.max_intervals:
        intervals = intervals[: args.max_intervals]
    release = time_frames.estimated_release_dates(data.items, data.ratings)
    pairs = (
        [tuple(p.split(":")) for p in args.pairs.split(",")] if args.pairs else item_models.model_distance_pairs()
    )
    print(f"{args.dataset} ({data.status}): {len(intervals)} eligible intervals at min_common_users="
          f"{args.min_common_users}, {sum(len(i.sample_users) for i in intervals)} user samples; "
          f"loaded in {time.perf_counter() - t0:.1f} s")
    models = {}
    for name in sorted({model for model, _ in pairs}):
        t1 = time.perf_counter()
        models[name] = item_models.build_item_model(name, data.items, data.ratings, data.tags)
        print(f"model {name}: {models[name].note} ({time.perf_counter() - t1:.1f} s)")
    settings = one_plus_random.OnePlusRandomSettings(sampling=not args.supplementary,
                                                     greedy_selection=args.supplementary)

    passes = {}
    for jobs in (1, args.jobs) if args.jobs > 1 else (1,):
        load = os.getloadavg()[0]
        started = time.perf_counter()
        results, timings = one_plus_random.run_grid(models, intervals, release, settings, pairs=pairs,
                                                    max_users_per_interval=args.max_users, n_jobs=jobs)
        passes[jobs] = (time.perf_counter() - started, load, results, timings)
    sequential = passes[1][3].assign(seconds=lambda t: t["seconds"].round(2))
    sequential["user_lists"] = [
        len(passes[1][2].query("model == @m and distance == @d")) // len(settings.recommenders)
        for m, d in zip(sequential["model"], sequential["distance"])
    ]
    print(sequential.to_string(index=False))
    lists = int(sequential["user_lists"].sum())
    print(f"whole pass ({len(pairs)} model x distance cells x 3 recommenders, {lists} user lists):")
    for jobs, (seconds, load, _, _) in passes.items():
        print(f"  {jobs} process{'es' if jobs > 1 else '':2s} {seconds:7.1f} s wall   (load average at start {load:.2f}"
              f" on {os.cpu_count()} cores)")
    if len(passes) > 1:
        pd.testing.assert_frame_equal(passes[1][2], passes[args.jobs][2], check_exact=True)
        print(f"  speed-up {passes[1][0] / passes[args.jobs][0]:.2f}x; results identical (every column, exactly)")


if __name__ == "__main__":
    main()
