"""Prefix-aware local judging: judgments/s of the local judge with and without the KV-cache prefix reuse, and with
the prompts asked in the caller's order or sorted by their text, on two few-shot prompts:

- Kang et al.'s 5-shot prompt: ``prepare_serendipity2018("synthetic", sample_size=40).requests("kang_fewshot")``
  (a system prompt and five solved examples shared by every prompt, then the user's history and the target film);
- Tokutake et al.'s 10-shot Base prompt of the prompt-strategies chapter:
  ``prepare_study("synthetic", sample_size=40)`` with ``first_messages("base", ...)`` (a system prompt holding ten
  solved examples, then the user's last ten films and the recommended film).

Each prompt family runs three legs in expected-score mode (max_tokens=1, log-probabilities), SmolLM2-135M-Instruct
through llama.cpp, each leg into a fresh temporary store:

- no prefix cache: every prompt evaluated from its first token (``LocalProvider(prefix_cache=False)``);
- prefix cache, caller's order (``run_judge(order_prompts=False)``);
- prefix cache, sorted by prompt text (the runner's default).

Then seconds per judgment in generation mode (up to --max-tokens tokens) with the prefix cache.  The replies of the
legs are checked to be identical.  Threads: $RECJUDGE_LOCAL_THREADS, default 1 here (other processes may be using
the CPU; the load average is printed).  The leg without the cache is the slow one: keep --fresh small.

    RECJUDGE_LOCAL_THREADS=1 python benchmarks/bench_prefix_local.py [--fresh 2] [--prompts 6] [--generate 2]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import dataclass

os.environ.setdefault("RECJUDGE_LOCAL_THREADS", "1")

from recjudge.llm import JudgeConfig, JudgeRequest, run_judge  # noqa: E402
from recjudge.llm.providers.local import DEFAULT_MODEL, LocalProvider  # noqa: E402
from recjudge.prompts.tokutake import TEMPLATES, first_messages  # noqa: E402
from recjudge.serendipity.ground_truth import prepare_serendipity2018  # noqa: E402
from recjudge.serendipity.prompt_strategies import prepare_study  # noqa: E402


@dataclass
class Leg:
    name: str
    judgments: int
    seconds: float
    reused: float  # share of prompt tokens taken from the cache


def interleaved(requests: list[JudgeRequest]) -> list[JudgeRequest]:
    """Two halves of the sample interleaved, so the caller's order is not already sorted."""
    half = len(requests) // 2
    return [r for pair in zip(requests[:half], requests[half:]) for r in pair]


def kang_requests(n: int) -> list[JudgeRequest]:
    return interleaved(prepare_serendipity2018("synthetic", sample_size=n).requests("kang_fewshot"))


def tokutake_requests(n: int) -> list[JudgeRequest]:
    study = prepare_study("synthetic", sample_size=n)
    examples = study.examples_block("base")
    return interleaved([JudgeRequest(key, first_messages("base", history, item, examples))
                        for key, history, item in study.items[["key", "history", "item"]].itertuples(index=False)])


def same(a, b) -> bool:
    """Same replies and scores, row by row (a score the reply does not give is NaN in both)."""
    columns = ["key", "reply", "score"]
    return a[columns].reset_index(drop=True).equals(b[columns].reset_index(drop=True))


def run(config, requests, provider, order):
    with tempfile.TemporaryDirectory() as store:
        started = time.perf_counter()
        result = run_judge(config, requests, store=store, provider=provider, order_prompts=order, progress=False)
        seconds = time.perf_counter() - started
    assert result.report.n_failed == 0, str(result.report)
    return seconds, result


def bench_family(label: str, prompt: str, requests: list[JudgeRequest], args) -> None:
    expected = JudgeConfig(provider="local", model=DEFAULT_MODEL, prompt=prompt, scoring="expected", max_tokens=1)
    cached, uncached = LocalProvider(DEFAULT_MODEL), LocalProvider(DEFAULT_MODEL, prefix_cache=False)
    loaded = cached._model(None, {})
    run(expected, requests[-1:], cached, True)  # loads the model, fills the cache with the shared prefix

    def reuse() -> float:
        share = loaded.reused_tokens / max(1, loaded.reused_tokens + loaded.evaluated_tokens)
        loaded.reused_tokens = loaded.evaluated_tokens = 0
        return share

    n, k = args.prompts, args.fresh
    fresh_s, fresh_run = run(expected, requests[:k], uncached, True)
    reuse()
    caller_s, caller_run = run(expected, requests[:n], cached, False)
    caller_reuse = reuse()
    sorted_s, sorted_run = run(expected, requests[:n], cached, True)
    sorted_reuse = reuse()
    for result in (caller_run, sorted_run):
        assert same(result.table.head(k), fresh_run.table)
    assert same(caller_run.table, sorted_run.table)

    generate = expected.with_(scoring="generate", max_tokens=args.max_tokens)
    gen_s, gen_run = run(generate, requests[: args.generate], cached, True)
    tokens = int(gen_run.table["output_tokens"].sum())
    prompt_tokens = int(fresh_run.table["input_tokens"].mean())

    legs = [Leg("no prefix cache", k, fresh_s, 0.0), Leg("prefix cache, caller's order", n, caller_s, caller_reuse),
            Leg("prefix cache, sorted (default)", n, sorted_s, sorted_reuse)]
    print(f"\n{label}: about {prompt_tokens} prompt tokens per judgment")
    print(f"{'expected-score mode (max_tokens=1)':<42} {'judgments':>9} {'s/judgment':>11} {'judgments/s':>12} "
          f"{'prompt tokens from cache':>25}")
    for leg in legs:
        print(f"{leg.name:<42} {leg.judgments:9d} {leg.seconds / leg.judgments:11.2f} "
              f"{leg.judgments / leg.seconds:12.2f} {100 * leg.reused:24.0f}%")
    print(f"speed-up of the prefix cache (sorted) over none: {(n / sorted_s) / (k / fresh_s):.1f}x "
          "(target >= 3x); replies identical in all legs")
    print(f"generation mode (max_tokens={args.max_tokens}), prefix cache: {gen_s / args.generate:.2f} s per judgment "
          f"({tokens / args.generate:.0f} tokens generated on average)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fresh", type=int, default=2, help="prompts judged without the prefix cache")
    parser.add_argument("--prompts", type=int, default=6, help="prompts judged in each leg with the cache")
    parser.add_argument("--generate", type=int, default=2, help="prompts judged in generation mode")
    parser.add_argument("--max-tokens", type=int, default=32)
    args = parser.parse_args()
    print(f"SmolLM2-135M-Instruct through llama.cpp, {os.environ['RECJUDGE_LOCAL_THREADS']} thread(s); synthetic "
          "samples (the prompts' shape, not their data, sets the speed)")
    bench_family("Kang et al. 5-shot (kang_fewshot)", "kang_fewshot", kang_requests(40), args)
    bench_family("Tokutake et al. 10-shot Base (tokutake_base)", TEMPLATES["base"], tokutake_requests(40), args)
    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
