"""Runner speed-up from concurrency against the loopback mock server at a fixed latency.

1,000 prompts, 100 ms per reply, concurrency 1 vs 16, each into a fresh temporary store.  Target speed-up >= 12x.
(The single-threaded leg alone takes at least prompts x latency = 100 s.)

    python benchmarks/bench_runner.py [--prompts 1000] [--latency 0.1] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from recjudge.llm import JudgeConfig, JudgeRequest, run_judge

MOCK = Path(__file__).resolve().parents[1] / "tests" / "mock_openai_server.py"


def timed_run(base_url: str, prompts: int, concurrency: int) -> float:
    requests = [JudgeRequest(f"k{i}", [{"role": "user", "content": f"bench prompt {concurrency} {i}"}])
                for i in range(prompts)]
    config = JudgeConfig(provider="openai", model="mock-judge", base_url=base_url)
    with tempfile.TemporaryDirectory() as store:
        started = time.perf_counter()
        run = run_judge(config, requests, store=store, concurrency=concurrency, progress=False)
        seconds = time.perf_counter() - started
    assert run.report.n_replies == prompts, str(run.report)
    if run.report.n_retries:
        print(f"  (concurrency {concurrency}: {run.report.n_retries} retried call(s))")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark-placeholder")
    # The server runs in its own process, as a real one would: sharing this interpreter's lock with 16 client
    # threads would measure Python's GIL, not the runner.
    server = subprocess.Popen([sys.executable, str(MOCK), "--latency", str(args.latency)], stdout=subprocess.PIPE,
                              text=True)
    try:
        base_url = server.stdout.readline().strip()
        timed_run(base_url, 32, args.concurrency)  # warm-up: imports the openai client (seconds), opens connections
        parallel = timed_run(base_url, args.prompts, args.concurrency)
        serial = timed_run(base_url, args.prompts, 1)
    finally:
        server.terminate()
        server.wait(timeout=10)
    floor = args.prompts * args.latency
    print(f"{args.prompts} prompts, mock latency {args.latency * 1000:.0f} ms (serial floor {floor:.0f} s)")
    print(f"concurrency 1:  {serial:7.2f} s  ({args.prompts / serial:6.1f} replies/s)")
    print(f"concurrency {args.concurrency}: {parallel:7.2f} s  ({args.prompts / parallel:6.1f} replies/s)")
    print(f"speed-up: {serial / parallel:.1f}x (target >= 12x; ideal {args.concurrency}x)")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
