"""Asks the local judges of the trust part on every answer they cover, storing each reply as it arrives (resumable:
what is stored is not asked again). The chapter only replays these replies.

    RECJUDGE_DATA_MIRROR=../shared/data python scripts/ask_trust_judges.py "SmolLM2-135M zero-shot" [--threads 1]

Judge names: ``recjudge.trust.judges.LOCAL_JUDGES``. The Gemma and Qwen judges need ``recjudge models fetch`` first.
The replies are the book's own, so they go to the committed store ``data/llm`` (``RECJUDGE_STORE`` names another).
"""

from __future__ import annotations

import argparse
import os

from recjudge import paths
from recjudge.serendipity.ground_truth import prepare_serendipity2018
from recjudge.trust import judges


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("judge", nargs="+", help="judge names (recjudge.trust.judges.LOCAL_JUDGES)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp CPU threads (default: all)")
    parser.add_argument("--source", default="mirror", choices=["mirror", "synthetic"],
                        help="Serendipity-2018 from the mirror, or the synthetic survey of the demonstration")
    args = parser.parse_args()
    if args.threads:
        os.environ["RECJUDGE_LOCAL_THREADS"] = str(args.threads)
    # The book's own replies: written where the chapter replays them, not to a reader's store.
    os.environ.setdefault(paths.STORE_ENV, str(paths.committed_store_dir()))

    # The RQ1 chapter's study (its run plan's sample size and seed), so the few-shot examples are the chapter's five.
    sample_size = 200 if args.source == "mirror" else 40
    study = prepare_serendipity2018(args.source, history_k=10, sample_size=sample_size, seed=0)
    covered = judges.coverage(study.answers, study.examples)
    for name in args.judge:
        judge = judges.by_name(name)
        run = judges.run(judge, study, covered, mode="auto", progress=True)
        report = run.report
        print(f"{name}: {report.n_prompts} prompts, {report.n_from_store} from the store, "
              f"{report.n_provider_calls} asked, {int(run.scores().isna().sum())} unparsable")


if __name__ == "__main__":
    main()
