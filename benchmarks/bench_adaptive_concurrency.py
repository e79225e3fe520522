"""Adaptive (AIMD) vs fixed concurrency against a rate-limited loopback server.

The mock OpenAI server runs in its own process with a token-bucket rate limit (default 50 requests/s; bursts of 5,
a tenth of a second's worth, and of 50, a second's worth, as APIs that enforce a per-minute limit per second do)
and 100 ms per reply; beyond the limit it answers 429 at once with Retry-After (``retry-after-ms``).  The same job
(400 prompts, each into a fresh temporary store) runs with the runner's default adaptive limit (halved when the
first 429 ends slow start, x0.85 on every later one, starts paced after the first 429), with the previous default
(x0.7 on every 429, unpaced) for comparison, optionally the default without pacing (``--unpaced``),
and with a fixed limit of 16 (which would need 160 requests/s).  Printed side by side: seconds, replies/s,
throughput as % of the
server's capacity, 429s received, failed prompts, and the adaptive limit's final/peak value.  Target: adaptive
>= 90 % of capacity with zero failed prompts.

    python benchmarks/bench_adaptive_concurrency.py [--prompts 400] [--rps 50] [--bursts 5,50] [--latency 0.1]
        [--unpaced] [--previous 0.7]   # the factor of the previous default's cuts; "" leaves that row out
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from recjudge.llm import JudgeConfig, JudgeRequest, asking, run_judge

DEFAULT = (asking.ADAPTIVE_FIRST_DECREASE, asking.ADAPTIVE_DECREASE, asking.ADAPTIVE_PACING,
           asking.ADAPTIVE_BINARY_INCREASE)


def set_adaptive(first: float, later: float, pacing: bool, binary: bool) -> None:
    (asking.ADAPTIVE_FIRST_DECREASE, asking.ADAPTIVE_DECREASE, asking.ADAPTIVE_PACING,
     asking.ADAPTIVE_BINARY_INCREASE) = first, later, pacing, binary

MOCK = Path(__file__).resolve().parents[1] / "tests" / "mock_openai_server.py"


def timed_run(base_url: str, prompts: int, tag: str, **kwargs):
    requests = [JudgeRequest(f"k{i}", [{"role": "user", "content": f"bench {tag} prompt {i}"}])
                for i in range(prompts)]
    config = JudgeConfig(provider="openai", model="mock-judge", base_url=base_url)
    with tempfile.TemporaryDirectory() as store:
        started = time.perf_counter()
        run = run_judge(config, requests, store=store, progress=False, **kwargs)
        seconds = time.perf_counter() - started
    return seconds, run.report


def bench(args, burst: float) -> None:
    server = subprocess.Popen([sys.executable, str(MOCK), "--latency", str(args.latency), "--rps", str(args.rps),
                               "--burst", str(burst)], stdout=subprocess.PIPE, text=True)
    try:
        base_url = server.stdout.readline().strip()
        timed_run(base_url, 8, "warm-up", adaptive=False, concurrency=2)  # imports the client, opens connections
        time.sleep(1.0)  # let the bucket refill
        results = {}
        variants = {"adaptive (default)": DEFAULT}
        if args.additive:
            variants["adaptive, additive only"] = (*DEFAULT[:3], False)
        if args.unpaced:
            variants["adaptive, not paced"] = (*DEFAULT[:2], False, DEFAULT[3])
        if args.previous:
            variants[f"adaptive, x{args.previous:g} (prev.)"] = (args.previous, args.previous, False, False)
        for name, settings in variants.items():
            set_adaptive(*settings)
            try:
                results[name] = timed_run(base_url, args.prompts, name, adaptive=True)
            finally:
                set_adaptive(*DEFAULT)
            time.sleep(1.0)
        results[f"fixed {args.fixed}"] = timed_run(base_url, args.prompts, "fixed", adaptive=False,
                                                   concurrency=args.fixed)
    finally:
        server.terminate()
        server.wait(timeout=10)
    # The bucket starts full, so the shortest possible time is (prompts - burst) / rps.
    best = max(args.prompts - burst, 0) / args.rps
    print(f"\nserver: {args.rps:.0f} req/s, burst {burst:.0f}, latency {args.latency * 1000:.0f} ms; {args.prompts} "
          f"prompts; shortest possible {best:.2f} s")
    print(f"load average after these runs: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'runner':<28} {'seconds':>8} {'replies/s':>10} {'% capacity':>11} {'429s':>6} {'failed':>7}  limit")
    for name, (seconds, report) in results.items():
        rate = report.n_replies / seconds
        gate = report.concurrency
        limit = f"final {gate['final']}, peak {gate['peak']}, cap {gate['cap']}, {gate['decreases']} cuts" \
            if gate["mode"] == "adaptive" else f"fixed {gate['cap']}"
        used = max(report.n_replies - burst, 0) / (args.rps * seconds)  # share of the bucket's refill used
        print(f"{name:<28} {seconds:8.2f} {rate:10.1f} {100 * used:10.1f}% {report.n_throttled:6d} "
              f"{report.n_failed:7d}  {limit}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=400)
    parser.add_argument("--rps", type=float, default=50.0)
    parser.add_argument("--bursts", default="5,50", help="token-bucket sizes to try, comma-separated")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--fixed", type=int, default=16)
    parser.add_argument("--previous", type=lambda x: float(x) if x else None, default=0.7,
                        help="the previous default: this factor on every 429 (empty: leave the row out)")
    parser.add_argument("--unpaced", action="store_true", help="also the default without pacing")
    parser.add_argument("--additive", action="store_true",
                        help="also the default growing by one per window after a cut (no binary increase)")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark-placeholder")
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    for burst in [float(b) for b in args.bursts.split(",")]:
        bench(args, burst)
    print("\n% capacity = (replies - burst) / (capacity x seconds): the share of the server's refill used. "
          "Target: adaptive >= 90% with 0 failed prompts.")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
