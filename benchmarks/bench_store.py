"""Replay throughput of the response store, with entries like the committed store's, measured in a fresh process.

Writes N entries (default 100,000) of one model: half are generation-mode replies (distinct texts of a few
hundred characters, no log-probabilities), half expected-score replies (one token with its 20 alternatives'
log-probabilities), about 500 bytes per line like ``data/llm``.  Then a *fresh Python process* (as a notebook
kernel would be) opens the store and replays both jobs with ``run_judge(mode="replay")``: index load (reading and
parsing every line), store keys hashed from the messages, lookups, reply parsing and the result tables.  Printed:
the index load alone, the replays alone, and replies/s including the index load (target >= 100,000/s).

It also times the runner's write path, one ``put_records([record])`` per reply (one lock and one write each), as
a job storing replies as they arrive does.

Then, in the same fresh process, each step every replay does is timed alone with the library's own functions:
decoding the lines (the index load), hashing every request's store key, reading a score from every distinct reply
text (``parse_likert``) and the expected score of every reply with log-probabilities (``expected_score``).  None of
them is kept across processes (the key commits to the full messages; replies are parsed again at read time so that
a parser fix applies to old replies), so their sum bounds the replay's throughput before any lookup or result table.

    python benchmarks/bench_store.py [--entries 100000] [--puts 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from recjudge.llm import JudgeConfig, JudgeRequest, ResponseStore, run_judge
from recjudge.llm.parsing import expected_score, parse_likert
from recjudge.llm.store import StoreKeyer

GENERATE = JudgeConfig(provider="local", model="bench-model", max_tokens=256)
EXPECTED = JudgeConfig(provider="local", model="bench-model", max_tokens=1, scoring="expected")
WORDS = ("surprising", "familiar", "relevant", "novel", "obscure", "popular", "director", "genre", "decade",
         "mood", "pacing", "cast", "unexpected", "pleasant", "niche", "acclaimed", "similar", "different")
TOKENS = ("Your", "S", "1", "The", "You", "R", "I", "My", "A", "##", "5", "2", "This", "F", "Based", "**", "3", "No",
          "#", "(")


def requests_for(half: int, tag: str) -> list[JudgeRequest]:
    return [
        JudgeRequest(f"{tag}{i}", [
            {"role": "system", "content": "You judge how serendipitous a recommendation is, on a 1-5 scale."},
            {"role": "user", "content": f"User {i} watched films A{i % 97}, B{i % 89}, C{i % 83}. "
                                        f"Recommended: film {i}. How serendipitous is it? Score it 1-5."},
        ])
        for i in range(half)
    ]


def reply_text(i: int) -> str:
    words = " ".join(WORDS[(i * 7 + j * 5) % len(WORDS)] for j in range(30))
    return f"Score: {1 + i % 5}. The recommendation of film {i} is {words}; overall a {1 + i % 5} out of 5."


def logprobs(i: int) -> list[dict[str, float]]:
    return [{token: round(-0.8 - 0.21 * rank - (i % 1000) / 7919, 4) for rank, token in enumerate(TOKENS)}]


def keyer_for(config: JudgeConfig) -> StoreKeyer:
    return StoreKeyer(provider=config.provider, model=config.model, temperature=config.temperature,
                      max_tokens=config.max_tokens, seed=config.seed, logprobs=config.scoring == "expected",
                      options=dict(config.options))


def records_for(config: JudgeConfig, requests: list[JudgeRequest]) -> list[dict]:
    keyer = keyer_for(config)
    expected = config.scoring == "expected"
    out = []
    for i, request in enumerate(requests):
        out.append({
            "key": keyer.key(request.messages, 0), "provider": config.provider, "model": config.model, "sample": 0,
            "request_key": request.key, "text": "Your" if expected else reply_text(i),
            "logprobs": logprobs(i) if expected else None, "input_tokens": 300 + i % 100,
            "output_tokens": 1 if expected else 60 + i % 20, "latency_s": round(0.5 + (i % 1000) / 1000, 3),
            "finish_reason": "length" if expected else "stop",
            "created": f"2026-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
        })
    return out


def child(root: str, half: int) -> None:
    """The fresh process: requests exist already (a notebook builds them); everything from opening the store on is
    timed."""
    generate_requests, expected_requests = requests_for(half, "g"), requests_for(half, "e")
    started, cpu_started = time.perf_counter(), time.process_time()
    store = ResponseStore(root)
    store.refresh()
    load_s = time.perf_counter() - started
    runs = [run_judge(GENERATE, generate_requests, store=store, mode="replay", progress=False),
            run_judge(EXPECTED, expected_requests, store=store, mode="replay", progress=False)]
    total_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
    assert all(run.report.n_from_store == half and run.report.n_failed == 0 for run in runs)
    assert runs[0].table["score"].notna().all() and runs[1].table["score"].notna().all()
    steps = {"load_s": load_s, **replay_steps(store, generate_requests, expected_requests)}
    print(json.dumps({"total_s": total_s, "cpu_s": cpu_s, "entries": len(store), "skipped": len(store.skipped_lines),
                      **steps}))


def replay_steps(store: ResponseStore, generate_requests: list[JudgeRequest],
                 expected_requests: list[JudgeRequest]) -> dict[str, float]:
    """Seconds of each step every replay does, timed alone (after the replays, on the loaded store)."""
    started = time.perf_counter()
    keys: list[str] = []
    for config, requests in ((GENERATE, generate_requests), (EXPECTED, expected_requests)):
        keyer = keyer_for(config)
        keys += [keyer.key(request.messages, 0) for request in requests]
    keys_s = time.perf_counter() - started
    records = store.peek_many(keys)
    assert len(records) == len(keys)
    texts = list({records[key]["text"]: None for key in keys})  # distinct texts, as the runner parses them
    logprobs = [records[key]["logprobs"] for key in keys if records[key].get("logprobs")]
    started = time.perf_counter()
    for text in texts:
        parse_likert(text)
    parse_s = time.perf_counter() - started
    started = time.perf_counter()
    for alternatives in logprobs:
        expected_score(alternatives)
    expected_s = time.perf_counter() - started
    return {"keys_s": keys_s, "parse_s": parse_s, "n_texts": len(texts), "expected_s": expected_s,
            "n_logprobs": len(logprobs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--puts", type=int, default=5_000)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    half = args.entries // 2
    n = 2 * half
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "store"
        records = records_for(GENERATE, requests_for(half, "g")) + records_for(EXPECTED, requests_for(half, "e"))
        started = time.perf_counter()
        ResponseStore(root).put_records(records)
        write_s = time.perf_counter() - started
        size = sum(p.stat().st_size for p in root.rglob("*.jsonl"))

        puts = records_for(GENERATE, requests_for(args.puts // 2, "pg")) + \
            records_for(EXPECTED, requests_for(args.puts - args.puts // 2, "pe"))
        for record in puts:
            record["model"] = "bench-put-model"
        put_store = ResponseStore(Path(folder) / "puts")
        started = time.perf_counter()
        for record in puts:
            put_store.put_records([record])
        put_s = time.perf_counter() - started

        timings = []
        for _ in range(3):  # fresh process each time; the best of three is least disturbed by other processes
            out = subprocess.run([sys.executable, __file__, "--child", str(root), str(half)], check=True,
                                 capture_output=True, text=True).stdout
            timings.append(json.loads(out.strip().splitlines()[-1]))
        best = min(timings, key=lambda t: t["total_s"])
    assert best["entries"] == n and best["skipped"] == 0

    print(f"entries: {n:,} (half generation replies, half with 20-way log-probabilities); "
          f"store {size / 1e6:.1f} MB, {size / n:.0f} bytes/entry")
    print(f"write, put_records of all at once:         {write_s:6.2f} s  ({n / write_s:>9,.0f} entries/s)")
    print(f"write, one put_records([r]) per reply:     {put_s:6.2f} s  ({len(puts) / put_s:>9,.0f} puts/s, "
          f"{len(puts):,} replies)")
    load_s = best["load_s"]
    print(f"fresh process, index load alone:           {load_s:6.2f} s  ({n / load_s:>9,.0f} entries/s)")
    replay_s = best["total_s"] - best["load_s"]
    print(f"fresh process, run_judge replays alone:    {replay_s:6.2f} s  ({n / replay_s:>9,.0f} replies/s)")
    print(f"fresh process, replay incl. index load:    {best['total_s']:6.2f} s  ({n / best['total_s']:>9,.0f} "
          "replies/s; target >= 100,000)")
    print("  (best of 3 fresh processes: " + ", ".join(f"{t['total_s']:.2f} s" for t in timings) + ")")
    print(f"fresh process, CPU time incl. index load:  {best['cpu_s']:6.2f} s  ({n / best['cpu_s']:>9,.0f} "
          "replies per CPU-second; robust to other processes)")
    floor = best["load_s"] + best["keys_s"] + best["parse_s"] + best["expected_s"]
    print("steps every replay does, each timed alone in the same fresh process:")
    print(f"  decode every line (the index load):      {best['load_s']:6.2f} s")
    print(f"  hash every request's store key:          {best['keys_s']:6.2f} s  ({n:,} keys)")
    print(f"  score every distinct reply text:         {best['parse_s']:6.2f} s  ({best['n_texts']:,} texts, "
          "parse_likert)")
    print(f"  expected score from log-probabilities:   {best['expected_s']:6.2f} s  ({best['n_logprobs']:,} replies, "
          "expected_score)")
    print(f"  sum, before any lookup or result table:  {floor:6.2f} s  ({n / floor:>9,.0f} replies/s at most; "
          f"the replay above reaches {floor / best['total_s']:.0%} of it)")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
