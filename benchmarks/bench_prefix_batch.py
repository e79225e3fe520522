"""Local judging at llama.cpp's floor: seconds per judgment of the local judge at the committed chapters' batch size
and at the prefix-reuse batch size (``recjudge.llm.prefix_reuse``), beside llama-cpp-python called directly.

Two few-shot prompt families (synthetic samples; the prompts' shape, not their data, sets the speed), the same
prompts for every leg, in the order the runner asks them (sorted by their text), SmolLM2-135M-Instruct, expected-score
mode (one reply token and its log-probabilities):

- Kang et al.'s 5-shot prompt (``kang_fewshot``), Tokutake et al.'s 10-shot Base prompt (as in bench_prefix_local.py).

Legs, each into a fresh temporary response store, each model loaded and its cache filled with one other prompt of the
family before the clock starts:

(a) recjudge at llama.cpp's default batch size (the committed chapters' configuration): the provider reuses the
    previous prompt's cache only in whole batches of 512 tokens, so little or nothing;
(b) recjudge with prefix reuse: the configuration ``local_judge_config(..., reuse=True)`` gives (n_batch 64);
(c) llama-cpp-python directly: ``llama_cpp.Llama(n_batch=64)``, ``create_chat_completion`` with one token and a
    logits processor reading the top-20 log-probabilities (what (b) reads), and llama-cpp-python's own prefix cache
    (the whole common prefix, not cut to a batch boundary: fewer tokens evaluated than (b), replies not bit-identical
    to a fresh evaluation);
(d) as (c) with the same reuse as (b): before each prompt the cache is cut to the common prefix rounded down to a
    multiple of 64, so llama-cpp-python evaluates the tokens (b) evaluates.  (b) against (d) is recjudge's own cost.

The replies of (b) are checked against a fresh evaluation of the same prompts at the same batch size
(``LocalProvider(prefix_cache=False)``): same reply text and the same expected score, bit for bit.  Threads:
$RECJUDGE_LOCAL_THREADS, default 1.  The figures are CPU seconds of this process per judgment (``time.process_time``:
on a machine whose cores other processes share, wall-clock seconds measure the others' load; they are printed too,
with the load average).

    RECJUDGE_LOCAL_THREADS=1 python benchmarks/bench_prefix_batch.py [--prompts 6] [--fresh 2]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("RECJUDGE_LOCAL_THREADS", "1")

import numpy as np  # noqa: E402
from bench_prefix_local import kang_requests, same, tokutake_requests  # noqa: E402
from scipy.special import log_softmax  # noqa: E402

from recjudge.llm import JudgeConfig, JudgeRequest, run_judge  # noqa: E402
from recjudge.llm.prefix_reuse import PREFIX_BATCH, local_judge_config  # noqa: E402
from recjudge.llm.providers.local import DEFAULT_MODEL, LocalProvider, resolve_model_path  # noqa: E402
from recjudge.llm.store import StoreKeyer  # noqa: E402
from recjudge.prompts.tokutake import TEMPLATES  # noqa: E402

TOP_LOGPROBS = 20


def asked_order(requests: list[JudgeRequest]) -> list[JudgeRequest]:
    """The requests in the order the runner asks them (sorted by the canonical JSON of their messages)."""
    return sorted(requests, key=lambda request: StoreKeyer.plain_messages_json(request.messages))


class Clock:
    """CPU and wall-clock seconds of a block."""

    def __enter__(self) -> "Clock":
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.cpu, self.wall = time.process_time() - self.cpu, time.perf_counter() - self.wall


def judge(config: JudgeConfig, requests: list[JudgeRequest], provider: LocalProvider):
    """(Clock, run) of one job into a fresh store."""
    with tempfile.TemporaryDirectory() as store:
        with Clock() as clock:
            run = run_judge(config, requests, store=store, provider=provider, progress=False)
    assert run.report.n_failed == 0, str(run.report)
    return clock, run


def reused_share(provider: LocalProvider, config: JudgeConfig) -> float:
    """Share of prompt tokens taken from the cache since the last call (counters reset)."""
    loaded = provider._model(config.model, config.provider_options())
    share = loaded.reused_tokens / max(1, loaded.reused_tokens + loaded.evaluated_tokens)
    loaded.reused_tokens = loaded.evaluated_tokens = 0
    return share


def cut_cache_to_batches(llama) -> None:
    """Make ``llama`` reuse, of the previous prompt's cache, only the common prefix rounded down to a multiple of its
    batch size (leg (d)): its ``generate`` compares a prompt with the first ``n_tokens`` cached tokens."""
    original = llama.generate

    def generate(tokens, *args, **kwargs):
        tokens = list(tokens)
        cached = list(llama.input_ids[: llama.n_tokens])
        common = 0
        for cached_token, token in zip(cached, tokens[:-1]):
            if cached_token != token:
                break
            common += 1
        llama.n_tokens = common // llama.n_batch * llama.n_batch
        return original(tokens, *args, **kwargs)

    llama.generate = generate


def direct_seconds(requests: list[JudgeRequest], warm_up: JudgeRequest, *, batch_aligned: bool) -> Clock:
    """llama-cpp-python alone at the prefix-reuse batch size: the Clock of ``requests``, one after another; its own
    prefix cache, cut to whole batches when ``batch_aligned``."""
    import llama_cpp

    threads = int(os.environ["RECJUDGE_LOCAL_THREADS"])
    llama = llama_cpp.Llama(model_path=str(resolve_model_path(DEFAULT_MODEL)), n_ctx=4096, n_batch=PREFIX_BATCH,
                            n_threads=threads, n_threads_batch=threads, verbose=False)
    if batch_aligned:
        cut_cache_to_batches(llama)

    read: list[np.ndarray] = []

    def top_logprobs(input_ids, scores):
        logprobs = log_softmax(np.asarray(scores, dtype=np.float64))
        read.append(np.argpartition(-logprobs, TOP_LOGPROBS - 1)[:TOP_LOGPROBS])
        return scores

    def ask(request: JudgeRequest) -> None:
        llama.create_chat_completion(messages=request.messages, max_tokens=1, temperature=0.0, seed=0,
                                     logits_processor=llama_cpp.LogitsProcessorList([top_logprobs]))

    try:
        ask(warm_up)
        with Clock() as clock:
            for request in requests:
                ask(request)
        return clock
    finally:
        llama.close()


def bench_family(label: str, prompt: str, requests: list[JudgeRequest], args) -> dict[str, float]:
    warm_up, requests = requests[-1], asked_order(requests[: args.prompts])
    committed = JudgeConfig(provider="local", model=DEFAULT_MODEL, prompt=prompt, scoring="expected", max_tokens=1)
    reusing = local_judge_config(committed, reuse=True)
    assert dict(reusing.options) == {"n_batch": PREFIX_BATCH}
    provider = LocalProvider(DEFAULT_MODEL)
    for config in (committed, reusing):
        judge(config, [warm_up], provider)
        reused_share(provider, config)
    a_s, a_run = judge(committed, requests, provider)
    a_share = reused_share(provider, committed)
    b_s, b_run = judge(reusing, requests, provider)
    b_share = reused_share(provider, reusing)
    c_s = direct_seconds(requests, warm_up, batch_aligned=False)
    d_s = direct_seconds(requests, warm_up, batch_aligned=True)
    _, fresh_run = judge(reusing, requests[: args.fresh], LocalProvider(DEFAULT_MODEL, prefix_cache=False))
    identical = same(b_run.table.head(args.fresh), fresh_run.table)
    assert identical, "prefix reuse changed a reply"
    n = len(requests)
    tokens = int(a_run.table["input_tokens"].mean())
    return {"family": label, "prompt tokens": tokens, "a": a_s.cpu / n, "a reuse": a_share, "b": b_s.cpu / n,
            "b reuse": b_share, "c": c_s.cpu / n, "d": d_s.cpu / n, "a wall": a_s.wall / n,
            "b wall": b_s.wall / n, "c wall": c_s.wall / n, "d wall": d_s.wall / n, "identical": identical}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=6, help="prompts judged in each leg")
    parser.add_argument("--fresh", type=int, default=2, help="replies of (b) checked against a fresh evaluation")
    args = parser.parse_args()
    if not 1 <= args.fresh <= args.prompts:
        parser.error(f"--fresh must be between 1 and --prompts ({args.prompts}), got {args.fresh}")
    print(f"SmolLM2-135M-Instruct (4-bit) through llama.cpp, {os.environ['RECJUDGE_LOCAL_THREADS']} thread(s), "
          f"{args.prompts} prompts per leg, synthetic samples; a shared machine: figures are indicative")
    rows = [bench_family("Kang et al. 5-shot", "kang_fewshot", kang_requests(40), args),
            bench_family("Tokutake et al. 10-shot Base", TEMPLATES["base"], tokutake_requests(40), args)]
    print(f"\nCPU seconds per judgment (expected score) {'':>12}" + "".join(f"{row['family']:>30}" for row in rows))
    print(f"{'prompt tokens (mean)':<55}" + "".join(f"{row['prompt tokens']:>30d}" for row in rows))
    legs = [("(a) recjudge, default n_batch (committed)", "a", "a reuse"),
            (f"(b) recjudge, n_batch {PREFIX_BATCH} (prefix reuse)", "b", "b reuse"),
            (f"(c) llama-cpp-python directly, n_batch {PREFIX_BATCH}, whole prefix", "c", None),
            (f"(d) llama-cpp-python directly, n_batch {PREFIX_BATCH}, same reuse as (b)", "d", None)]
    for name, column, share in legs:
        cells = "".join(f"{row[column]:>17.3f} s" + (f" ({100 * row[share]:3.0f}% cached)" if share else " " * 12)
                        for row in rows)
        print(f"{name:<55}{cells}")
    print(f"{'(a) / (b): speed-up of prefix reuse':<55}" + "".join(f"{row['a'] / row['b']:>17.2f} x" + " " * 11
                                                                     for row in rows))
    print(f"{'(b) / (d) - 1: recjudge over llama-cpp-python (<= 10%)':<55}"
          + "".join(f"{100 * (row['b'] / row['d'] - 1):>17.1f} %" + " " * 11 for row in rows))
    print(f"{'(b) / (c) - 1: the same, (c) reusing the whole prefix':<55}"
          + "".join(f"{100 * (row['b'] / row['c'] - 1):>17.1f} %" + " " * 11 for row in rows))
    print("wall-clock seconds per judgment (a, b, c, d): " + "; ".join(
        f"{row['family']}: {row['a wall']:.2f}, {row['b wall']:.2f}, {row['c wall']:.2f}, {row['d wall']:.2f}"
        for row in rows))
    print(f"replies of (b) identical to a fresh evaluation at n_batch {PREFIX_BATCH}: "
          f"{all(row['identical'] for row in rows)} ({args.fresh} prompts per family)")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
