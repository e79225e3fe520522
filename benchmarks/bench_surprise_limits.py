"""Exact potential-surprise limits: subset dynamic programme vs brute force over all orders.

Prints, for |N| = 9 and 10 unknown items (one known item, points uniform in [0, 10]², Euclidean distance), the
seconds each method takes for the maximum and the minimum, the values (they must agree) and the speed-up.
Target: the dynamic programme at least 1000× faster at |N| = 10. Then the programme alone at larger |N|.

    python benchmarks/bench_surprise_limits.py [--sizes 9 10] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

from scipy.spatial.distance import pdist, squareform

from recjudge.surprise.limits import (
    SurpriseProblem,
    _small_layer_plan,
    potential_surprise_bruteforce,
    potential_surprise_exact,
    random_instance,
)


def best_time(fn, repeats: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[9, 10])
    parser.add_argument("--repeats", type=int, default=3, help="repeats of the dynamic programme (best kept)")
    parser.add_argument("--dp-only", type=int, nargs="*", default=[15, 18, 20])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    print("DP cold = first call, including building the subset layer plan (cached per |N| up to 16 items);")
    print("DP warm = best of --repeats later calls. Brute force = numpy-batched evaluation of all |N|! orders.")
    print(f"{'|N|':>4} {'kind':>4} {'brute force s':>14} {'DP cold s':>10} {'DP warm s':>10} "
          f"{'speed-up cold':>14} {'speed-up warm':>14}  values agree")
    for m in args.sizes:
        points = random_instance(m + 1, 2, args.seed)
        # A precomputed matrix, so that only the search over orders / subsets is timed.
        problem = SurpriseProblem.from_distance_matrix(squareform(pdist(points)), [0], range(1, m + 1))
        for kind in ("max", "min"):
            t_brute, brute = best_time(lambda: potential_surprise_bruteforce(problem, kind), 1)
            _small_layer_plan.cache_clear()
            t_cold, _ = best_time(lambda: potential_surprise_exact(problem, kind), 1)
            t_dp, dp = best_time(lambda: potential_surprise_exact(problem, kind), args.repeats)
            agree = abs(brute.value - dp.value) <= 1e-9 * abs(brute.value)
            print(f"{m:>4} {kind:>4} {t_brute:>14.3f} {t_cold:>10.5f} {t_dp:>10.5f} {t_brute / t_cold:>13.0f}× "
                  f"{t_brute / t_dp:>13.0f}×  {agree} ({brute.value:.6f} vs {dp.value:.6f})")
    for m in args.dp_only:
        points = random_instance(m + 1, 2, args.seed)
        problem = SurpriseProblem.from_distance_matrix(squareform(pdist(points)), [0], range(1, m + 1))
        t_dp, dp = best_time(lambda: potential_surprise_exact(problem, "max"), 1)
        print(f"{m:>4}  max {'(not run)':>14} {t_dp:>10.3f}   (DP only, cold)")


if __name__ == "__main__":
    main()
