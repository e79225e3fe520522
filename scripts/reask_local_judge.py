"""Re-asks a sample of the committed store's local-judge prompts with the installed llama.cpp build and prints how far
the fresh expected scores are from the stored ones.

The local judge's numbers depend on the CPU kernels llama.cpp was compiled with (AVX2, AVX-512, ...): the committed
store, not a live re-run, makes the book reproducible. This script says whether this machine's build reproduces it.

    python scripts/reask_local_judge.py [--n 40] [--source synthetic|mirror] [--prompt kang_basic]
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

from recjudge.llm import JudgeConfig, run_judge
from recjudge.serendipity.ground_truth import prepare_serendipity2018


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="prompts to re-ask (the first n of the chapter's sample)")
    parser.add_argument("--source", default="synthetic", choices=["synthetic", "mirror"],
                        help="which run of the proxy-vs-LLM chapter the prompts come from")
    parser.add_argument("--prompt", default="kang_basic")
    args = parser.parse_args()

    # The parameters of the run plan's run of that chapter, so the prompts are the ones whose replies are stored.
    sample_size = 40 if args.source == "synthetic" else 200
    study = prepare_serendipity2018(args.source, history_k=10, sample_size=sample_size, seed=0)
    requests = study.requests(args.prompt)[: args.n]
    config = JudgeConfig(provider="local", model="smollm2-135m-instruct-q4_1", prompt=args.prompt,
                         scoring="expected", max_tokens=1, temperature=0.0, runs=1, seed=0)

    stored = run_judge(config, requests, mode="replay", progress=False).scores()
    with tempfile.TemporaryDirectory() as fresh_store:
        live = run_judge(config, requests, store=fresh_store, mode="live", progress=False,
                         concurrency=1).scores()
    difference = (live - stored.reindex(live.index)).abs()
    import llama_cpp

    print(f"llama-cpp-python {llama_cpp.__version__}; threads {os.environ.get('RECJUDGE_LOCAL_THREADS', 'default')}")
    print(f"{args.source} / {args.prompt}: {len(difference)} prompts re-asked live, "
          f"{int((difference == 0).sum())} identical expected scores, "
          f"{int((difference < 1e-6).sum())} within 1e-6; largest difference {np.nanmax(difference):.3g}, "
          f"mean {np.nanmean(difference):.3g} (1-5 scale)")


if __name__ == "__main__":
    main()
