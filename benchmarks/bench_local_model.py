"""Seconds per judgment of the local judge (SmolLM2-135M-Instruct Q4_1 through llama.cpp), in both scoring modes.

    python benchmarks/bench_local_model.py [--prompts 10] [--max-tokens 64] [--threads N] [--model NAME_OR_PATH]

Prints the load time, then for (a) generation mode (temperature 0, a reply of up to --max-tokens tokens, parsed
with ``parse_likert``) and (b) expected-score mode (one generated token with log-probabilities, scored with
``expected_score``) the mean/median/max seconds per judgment, token counts, and how many judgments gave a score.

The prompts are the generic 1-5 serendipity prompt (template ``likert_generic``) over a fixed list of well-known
films, not a dataset sample. A 135M-parameter model judges near noise level: these figures measure speed and the
pipeline, not judging quality. Timings depend on how busy the machine is; the load average is printed alongside.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

from recjudge.llm.parsing import expected_score, parse_likert
from recjudge.llm.providers.local import DEFAULT_MODEL, LocalProvider
from recjudge.prompts import render

ASPECT_DEFINITION = (
    "A recommendation is serendipitous when the item is relevant to the user and also unexpected: "
    "the user would not have found it on their own, and it is a pleasant surprise."
)
# (films the user liked, recommended film): illustrative pairs, chosen to span obvious and surprising picks.
CASES = [
    ("Toy Story (1995); Finding Nemo (2003); Up (2009)", "Monsters, Inc. (2001)"),
    ("Toy Story (1995); Finding Nemo (2003); Up (2009)", "Alien (1979)"),
    ("The Godfather (1972); Goodfellas (1990); Casino (1995)", "The Departed (2006)"),
    ("The Godfather (1972); Goodfellas (1990); Casino (1995)", "Amélie (2001)"),
    ("Pride and Prejudice (2005); Sense and Sensibility (1995); Emma (1996)", "Atonement (2007)"),
    ("Pride and Prejudice (2005); Sense and Sensibility (1995); Emma (1996)", "Mad Max: Fury Road (2015)"),
    ("The Matrix (1999); Inception (2010); Blade Runner (1982)", "Ghost in the Shell (1995)"),
    ("The Matrix (1999); Inception (2010); Blade Runner (1982)", "Paddington 2 (2017)"),
    ("Airplane! (1980); The Naked Gun (1988); Hot Shots! (1991)", "Top Secret! (1984)"),
    ("Airplane! (1980); The Naked Gun (1988); Hot Shots! (1991)", "Seven Samurai (1954)"),
    ("Spirited Away (2001); My Neighbor Totoro (1988); Princess Mononoke (1997)", "Howl's Moving Castle (2004)"),
    ("Spirited Away (2001); My Neighbor Totoro (1988); Princess Mononoke (1997)", "Fargo (1996)"),
]


def summary(seconds: list[float]) -> str:
    return (
        f"mean {statistics.fmean(seconds):.2f} s, median {statistics.median(seconds):.2f} s, "
        f"min {min(seconds):.2f} s, max {max(seconds):.2f} s per judgment"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=10, help="judgments per mode (default 10)")
    parser.add_argument("--max-tokens", type=int, default=64, help="reply limit in generation mode (default 64)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: all CPUs)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="local model name or GGUF path")
    parser.add_argument("--show-replies", action="store_true", help="print every generated reply")
    args = parser.parse_args()

    cases = [CASES[i % len(CASES)] for i in range(args.prompts)]
    prompts = [
        render("likert_generic", aspect="serendipity", aspect_definition=ASPECT_DEFINITION, history=h, item=i)
        for h, i in cases
    ]
    options = {"n_threads": args.threads} if args.threads else {}
    print(f"local model benchmark: {args.model}, {args.prompts} prompts per mode, CPUs {os.cpu_count()}, "
          f"threads {args.threads or os.cpu_count()}, load average at start {os.getloadavg()[0]:.2f}")

    provider = LocalProvider(args.model)
    started = time.perf_counter()
    provider.load(options=options)
    print(f"load: {time.perf_counter() - started:.2f} s")

    def judge(messages, **params):
        started = time.perf_counter()
        reply = provider.complete(messages, model=args.model, temperature=0.0, seed=0, options=options, **params)
        return reply, time.perf_counter() - started

    # (a) generation mode
    seconds, scores, input_tokens, output_tokens = [], [], [], []
    for messages in prompts:
        reply, took = judge(messages, max_tokens=args.max_tokens)
        seconds.append(took)
        scores.append(parse_likert(reply.text))
        input_tokens.append(reply.input_tokens)
        output_tokens.append(reply.output_tokens)
        if args.show_replies:
            print(f"  reply ({took:.1f} s, score {scores[-1]}): {reply.text!r}")
    parsed = [s for s in scores if not math.isnan(s)]
    print(f"(a) generation, max_tokens={args.max_tokens}: {summary(seconds)}; "
          f"prompt {statistics.fmean(input_tokens):.0f} tokens, reply {statistics.fmean(output_tokens):.1f} tokens "
          f"on average; parsable 1-5 score in {len(parsed)}/{len(scores)} replies"
          + (f" (values {sorted(parsed)})" if parsed else ""))

    # (b) expected-score mode
    seconds, expected, score_mass = [], [], []
    for messages in prompts:
        reply, took = judge(messages, max_tokens=1, logprobs=True)
        seconds.append(took)
        expected.append(expected_score(reply.logprobs))
        first = reply.logprobs[0] if reply.logprobs else {}
        score_mass.append(sum(math.exp(v) for k, v in first.items() if k.strip() in {"1", "2", "3", "4", "5"}))
    defined = [e for e in expected if not math.isnan(e)]
    print(f"(b) expected score, max_tokens=1 + top-20 logprobs: {summary(seconds)}; "
          f"score defined for {len(defined)}/{len(expected)} prompts"
          + (f" (mean {statistics.fmean(defined):.2f}, range {min(defined):.2f}-{max(defined):.2f})" if defined else "")
          + f"; probability on the tokens 1-5 at the first position: mean {statistics.fmean(score_mass):.3f}")
    print(f"load average at end {os.getloadavg()[0]:.2f}. SmolLM2-135M judges near noise level: speed figures only.")


if __name__ == "__main__":
    main()
