"""Time the whole one-plus-random pass (Algorithm 1 of Lima & Peres) over all eligible users of ml-latest-small.

Prints, per model x distance, the seconds taken, the number of user lists and the distance columns computed, then
the total. ml-latest-small has no frame that meets the paper's eligibility threshold of 30 common users, so the
threshold is a parameter (default 8, the notebook's; ``--min-common-users``).

    RECJUDGE_DATA_MIRROR=../shared/data python benchmarks/bench_one_plus_random.py [--pairs U:cosine,N:npmi]
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from recjudge.surprise import item_models
from recjudge.surprise import one_plus_random
from recjudge.surprise import time_frames
from recjudge.data import load_movielens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="latest-small")
    parser.add_argument("--min-common-users", type=int, default=8)
    parser.add_argument("--pairs", default="", help="comma-separated model:distance list (default: all 13)")
    parser.add_argument("--max-intervals", type=int, default=None)
    parser.add_argument("--max-users", type=int, default=None)
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
    needed = sorted({model for model, _ in pairs})
    print(f"{args.dataset} ({data.status}): {len(intervals)} eligible intervals at min_common_users="
          f"{args.min_common_users}, {sum(len(i.sample_users) for i in intervals)} user samples; "
          f"loaded in {time.perf_counter() - t0:.1f} s")
    models = {}
    for name in needed:
        t1 = time.perf_counter()
        models[name] = item_models.build_item_model(name, data.items, data.ratings, data.tags)
        print(f"model {name}: {models[name].note} ({time.perf_counter() - t1:.1f} s)")
    settings = one_plus_random.OnePlusRandomSettings(sampling=not args.supplementary,
                                                     greedy_selection=args.supplementary)
    rows = []
    for model, distance in pairs:
        t1 = time.perf_counter()
        result = one_plus_random.run_one_plus_random(models[model], distance, intervals, release, settings,
                                                     max_users_per_interval=args.max_users)
        seconds = time.perf_counter() - t1
        lists = len(result) // len(settings.recommenders)
        rows.append({"model": model, "distance": distance, "seconds": round(seconds, 2), "user_lists": lists,
                     "ms_per_list": round(1000 * seconds / max(lists, 1), 1)})
        print(f"{model:>2} {distance:<15} {seconds:8.1f} s  {lists:5d} user lists", flush=True)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    print(f"whole pass: {table['seconds'].sum():.1f} s for {table['user_lists'].sum()} user lists "
          f"({len(pairs)} model x distance cells x 3 recommenders)")


if __name__ == "__main__":
    main()
