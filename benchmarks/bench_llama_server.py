"""The local judge through llama-cpp-python's OpenAI-compatible server on loopback versus in this process.

    python benchmarks/bench_llama_server.py [--prompts 8] [--max-tokens 8] [--threads N] [--starts 2]

Prints, side by side, (1) start-up: the server's from launch until ``GET /v1/models`` lists the model
(``recjudge.llm.serve_local.LocalServer``, mean of ``--starts`` launches) against loading the GGUF in this process
(``LocalProvider.load``); (2) seconds per short judgment through the runner (``run_judge``, live mode, one request at
a time, a throw-away store) in generation mode (temperature 0, up to ``--max-tokens`` tokens) and expected-score
mode (one token with the top-20 log-probabilities), with the provider's own latency per reply beside the runner's
wall time; and how far the two paths' replies agree (identical reply texts, largest difference of expected scores).

Both paths use the same GGUF (SmolLM2-135M-Instruct Q4_1), context size and threads (``--threads``, else
RECJUDGE_LOCAL_THREADS, else every CPU). Timings depend on how busy the machine is: the load average is printed at
the start and the end.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time

from recjudge.llm import JudgeConfig, JudgeRequest, ResponseStore, run_judge
from recjudge.llm.providers.local import DEFAULT_MODEL, THREADS_ENV, LocalProvider
from recjudge.llm.serve_local import LocalServer
from recjudge.prompts import render

DEFINITION = ("A recommendation is serendipitous when the item is relevant to the user and also unexpected: the user "
              "would not have found it on their own, and it is a pleasant surprise.")
CASES = [
    ("Toy Story (1995); Finding Nemo (2003); Up (2009)", "Monsters, Inc. (2001)"),
    ("Toy Story (1995); Finding Nemo (2003); Up (2009)", "Alien (1979)"),
    ("The Godfather (1972); Goodfellas (1990); Casino (1995)", "The Departed (2006)"),
    ("The Godfather (1972); Goodfellas (1990); Casino (1995)", "Amélie (2001)"),
    ("The Matrix (1999); Inception (2010); Blade Runner (1982)", "Ghost in the Shell (1995)"),
    ("The Matrix (1999); Inception (2010); Blade Runner (1982)", "Paddington 2 (2017)"),
    ("Spirited Away (2001); My Neighbor Totoro (1988); Princess Mononoke (1997)", "Howl's Moving Castle (2004)"),
    ("Spirited Away (2001); My Neighbor Totoro (1988); Princess Mononoke (1997)", "Fargo (1996)"),
]


def judge(config: JudgeConfig, requests: list[JudgeRequest]) -> tuple[float, list[float], list[str], list[float]]:
    """(runner seconds per judgment, provider latencies, reply texts, scores) of one live job in a fresh store."""
    with tempfile.TemporaryDirectory() as store:
        started = time.perf_counter()
        run = run_judge(config, requests, store=store, mode="live", concurrency=1, adaptive=False, progress=False)
        per_judgment = (time.perf_counter() - started) / len(requests)
        assert run.report.n_failed == 0, run.report
        latency = {entry.request_key: entry.latency_s for entry in ResponseStore(store)}
    keys = run.table["key"].tolist()
    return per_judgment, [latency[key] for key in keys], run.table["reply"].tolist(), run.table["score"].tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=8, help="judgments per mode and path (default 8)")
    parser.add_argument("--max-tokens", type=int, default=8, help="reply limit in generation mode (default 8)")
    parser.add_argument("--threads", type=int, default=None,
                        help=f"llama.cpp threads for both paths (default: {THREADS_ENV}, else every CPU)")
    parser.add_argument("--starts", type=int, default=2, help="server launches timed (default 2)")
    args = parser.parse_args()
    if args.threads:
        os.environ[THREADS_ENV] = str(args.threads)  # read by LocalServer and by the local provider alike
    requests = [JudgeRequest(f"case-{i}", render("likert_generic", aspect="serendipity", aspect_definition=DEFINITION,
                                                 history=CASES[i % len(CASES)][0], item=CASES[i % len(CASES)][1]))
                for i in range(args.prompts)]
    threads = os.environ.get(THREADS_ENV) or os.cpu_count()
    print(f"llama.cpp server vs in-process: {DEFAULT_MODEL}, {args.prompts} prompts per mode, CPUs {os.cpu_count()}, "
          f"threads {threads}, load average at start {os.getloadavg()[0]:.2f}")

    starts = []
    for _ in range(args.starts - 1):
        with LocalServer() as server:
            starts.append(server.startup_s)
    server = LocalServer().start()
    starts.append(server.startup_s)
    provider = LocalProvider(DEFAULT_MODEL)
    started = time.perf_counter()
    provider.load()
    load_s = time.perf_counter() - started

    rows = [("start-up / load", f"{statistics.fmean(starts):.2f} s (launch to /v1/models, "
             f"{' '.join(f'{s:.2f}' for s in starts)})", f"{load_s:.2f} s (GGUF load)")]
    agreement = []
    try:
        spec = server.judge_spec()
        for scoring, max_tokens, label in (("generate", args.max_tokens, f"generate, <= {args.max_tokens} tokens"),
                                           ("expected", 1, "expected, 1 token + top-20")):
            role = dict(prompt="likert_generic", scoring=scoring, max_tokens=max_tokens)
            via_server = judge(spec.to_config(**role), requests)
            in_process = judge(JudgeConfig(provider="local", model=DEFAULT_MODEL, **role), requests)
            rows.append((label, *(f"{wall:.2f} s/judgment (provider {statistics.fmean(latency):.2f} s)"
                                  for wall, latency, _, _ in (via_server, in_process))))
            same = sum(a == b for a, b in zip(via_server[2], in_process[2]))
            differences = [abs(a - b) for a, b in zip(via_server[3], in_process[3])
                           if not (math.isnan(a) or math.isnan(b))]
            agreement.append(f"{label}: identical replies {same}/{len(requests)}"
                             + (f", largest score difference {max(differences):.2g}" if differences else ""))
    finally:
        server.stop()

    width = max(len(row[0]) for row in rows)
    column = max(len(row[1]) for row in rows)
    print(f"{'':{width}}  {'server (HTTP, loopback)':{column}}  in-process (provider 'local')")
    for name, through_server, here in rows:
        print(f"{name:{width}}  {through_server:{column}}  {here}")
    print("agreement: " + "; ".join(agreement))
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
