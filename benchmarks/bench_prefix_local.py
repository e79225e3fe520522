"""Prefix-aware local judging: judgments/s of the local judge on Kang et al.'s 5-shot prompt with and without the
KV-cache prefix reuse, and with the prompts asked in the caller's order or sorted by their text.

Requests: ``prepare_serendipity2018("synthetic", sample_size=40).requests("kang_fewshot")`` (a system prompt and
five solved examples shared by every prompt, then the user's history and the target film).  Expected-score mode
(max_tokens=1, log-probabilities), SmolLM2-135M-Instruct through llama.cpp, each leg into a fresh temporary store:

- no prefix cache: every prompt evaluated from its first token (``LocalProvider(prefix_cache=False)``);
- prefix cache, caller's order (``run_judge(order_prompts=False)``);
- prefix cache, sorted by prompt text (the runner's default).

Also seconds per judgment in generation mode (up to --max-tokens tokens) with the prefix cache.  The replies of the
legs are checked to be identical.  Threads: $RECJUDGE_LOCAL_THREADS, default 1 here (other processes may be using
the CPU; the load average is printed).  The leg without the cache is the slow one: keep --fresh small.

    RECJUDGE_LOCAL_THREADS=1 python benchmarks/bench_prefix_local.py [--fresh 1] [--prompts 6] [--generate 2]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("RECJUDGE_LOCAL_THREADS", "1")

from recjudge.llm import JudgeConfig, run_judge  # noqa: E402
from recjudge.llm.providers.local import DEFAULT_MODEL, LocalProvider  # noqa: E402
from recjudge.serendipity.ground_truth import prepare_serendipity2018  # noqa: E402


def leg(config, requests, provider, order):
    with tempfile.TemporaryDirectory() as store:
        started = time.perf_counter()
        run = run_judge(config, requests, store=store, provider=provider, order_prompts=order, progress=False)
        seconds = time.perf_counter() - started
    assert run.report.n_failed == 0, str(run.report)
    return seconds, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fresh", type=int, default=1, help="prompts judged without the prefix cache")
    parser.add_argument("--prompts", type=int, default=6, help="prompts judged in each leg with the cache")
    parser.add_argument("--generate", type=int, default=2, help="prompts judged in generation mode")
    parser.add_argument("--max-tokens", type=int, default=32)
    args = parser.parse_args()
    requests = prepare_serendipity2018("synthetic", sample_size=40).requests("kang_fewshot")
    # Interleave two halves of the sample so the caller's order is not already sorted.
    requests = [r for pair in zip(requests[: len(requests) // 2], requests[len(requests) // 2:]) for r in pair]
    expected = JudgeConfig(provider="local", model=DEFAULT_MODEL, prompt="kang_fewshot", scoring="expected",
                           max_tokens=1)
    cached, uncached = LocalProvider(DEFAULT_MODEL), LocalProvider(DEFAULT_MODEL, prefix_cache=False)
    loaded = cached._model(None, {})
    warm = requests[-1:]
    leg(expected, warm, cached, True)  # loads the model, fills the cache with the shared prefix

    n = args.prompts
    fresh_s, fresh_run = leg(expected, requests[: args.fresh], uncached, True)
    loaded.reused_tokens = loaded.evaluated_tokens = 0
    caller_s, caller_run = leg(expected, requests[:n], cached, False)
    caller_reuse = loaded.reused_tokens / max(1, loaded.reused_tokens + loaded.evaluated_tokens)
    loaded.reused_tokens = loaded.evaluated_tokens = 0
    sorted_s, sorted_run = leg(expected, requests[:n], cached, True)
    sorted_reuse = loaded.reused_tokens / max(1, loaded.reused_tokens + loaded.evaluated_tokens)
    k = args.fresh
    for run in (caller_run, sorted_run):
        assert run.table["reply"].tolist()[:k] == fresh_run.table["reply"].tolist()
        assert run.table["score"].tolist()[:k] == fresh_run.table["score"].tolist()
    assert caller_run.table["score"].tolist() == sorted_run.table["score"].tolist()

    generate = expected.with_(scoring="generate", max_tokens=args.max_tokens)
    gen_s, gen_run = leg(generate, requests[: args.generate], cached, True)
    tokens = int(gen_run.table["output_tokens"].sum())
    prompt_tokens = int(fresh_run.table["input_tokens"].mean())

    print(f"kang_fewshot, synthetic Serendipity-2018 sample; about {prompt_tokens} prompt tokens per judgment; "
          f"{os.environ['RECJUDGE_LOCAL_THREADS']} llama.cpp thread(s)")
    print(f"{'expected-score mode (max_tokens=1)':<42} {'judgments':>9} {'s/judgment':>11} {'judgments/s':>12} "
          f"{'prompt tokens from cache':>25}")
    rows = [("no prefix cache", args.fresh, fresh_s, 0.0), ("prefix cache, caller's order", n, caller_s, caller_reuse),
            ("prefix cache, sorted (default)", n, sorted_s, sorted_reuse)]
    for name, count, seconds, reuse in rows:
        print(f"{name:<42} {count:9d} {seconds / count:11.2f} {count / seconds:12.2f} {100 * reuse:24.0f}%")
    print(f"speed-up of the prefix cache (sorted) over none: {(n / sorted_s) / (args.fresh / fresh_s):.1f}x "
          "(target >= 3x); replies identical in all legs")
    print(f"generation mode (max_tokens={args.max_tokens}), prefix cache: {gen_s / args.generate:.2f} s per judgment "
          f"({tokens / args.generate:.0f} tokens generated on average)")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
