"""Replay throughput of the response store: write N entries, then replay all of them.

Prints: write time, index load time (once per process), raw lookups/s, and end-to-end ``run_judge`` replay
replies/s (store keys hashed from the messages, lookups, parsing, result table).  Target: >= 50,000 replies/s.

    python benchmarks/bench_store.py [--entries 100000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from recjudge.llm import JudgeConfig, JudgeRequest, ResponseStore, StoredReply, run_judge, store_key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000)
    args = parser.parse_args()
    n = args.entries
    config = JudgeConfig(provider="openai", model="bench-model", max_tokens=32)
    requests = [
        JudgeRequest(f"u{i}:i{i}", [
            {"role": "system", "content": "You judge how serendipitous a recommendation is, on a 1-5 scale."},
            {"role": "user", "content": f"User {i} watched films A, B, C. Recommended: film {i}. Score it 1-5."},
        ])
        for i in range(n)
    ]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        started = time.perf_counter()
        keys = [
            store_key(provider=config.provider, model=config.model, messages=r.messages,
                      temperature=config.temperature, max_tokens=config.max_tokens, seed=config.seed,
                      logprobs=False, options={}, sample=0)
            for r in requests
        ]
        replies = [
            StoredReply(key=k, provider=config.provider, model=config.model, sample=0, request_key=r.key,
                        text=f"Score: {1 + i % 5}", logprobs=None, input_tokens=40, output_tokens=3,
                        latency_s=0.412, finish_reason="stop", created="2026-01-01T00:00:00.000Z")
            for i, (k, r) in enumerate(zip(keys, requests))
        ]
        ResponseStore(root).put_many(replies)
        write_s = time.perf_counter() - started
        size_mb = sum(p.stat().st_size for p in root.rglob("*.jsonl")) / 1e6

        store = ResponseStore(root)
        started, cpu_started = time.perf_counter(), time.process_time()
        store.refresh()
        load_s, load_cpu_s = time.perf_counter() - started, time.process_time() - cpu_started

        started = time.perf_counter()
        found = sum(store.get_record(k) is not None for k in keys)
        lookup_s = time.perf_counter() - started
        assert found == n

        started, cpu_started = time.perf_counter(), time.process_time()
        run = run_judge(config, requests, store=store, mode="replay", progress=False)
        replay_s, replay_cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
        assert run.report.n_from_store == n and run.report.n_provider_calls == 0

    print(f"entries: {n:,}  store size: {size_mb:.1f} MB ({size_mb * 1e6 / n:.0f} bytes/entry)")
    print(f"write (put_many, incl. key hashing): {write_s:.2f} s")
    print(f"index load (once per process):       {load_s:.2f} s  ({n / load_s:,.0f} entries/s)")
    print(f"raw lookups:                         {lookup_s:.3f} s  ({n / lookup_s:,.0f} lookups/s)")
    print(f"run_judge replay (keys+parse+table): {replay_s:.2f} s  ({n / replay_s:,.0f} replies/s; target >= 50,000)")
    print(f"replay incl. index load:             {load_s + replay_s:.2f} s  ({n / (load_s + replay_s):,.0f} replies/s)")
    print(f"CPU time (robust on a busy machine): index load {load_cpu_s:.2f} s, replay {replay_cpu_s:.2f} s "
          f"({n / replay_cpu_s:,.0f} replies per CPU-second)")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
