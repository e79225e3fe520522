"""Khirbat et al.'s recommender held to catalogue titles: is a llama.cpp grammar of a whole catalogue affordable?

The constrained recommender of the metamorphic chapter returns a JSON list of k free-text titles
(``shapes.titles(k)``), matched to the catalogue afterwards.  The alternative restricts every title to the catalogue
itself (``shapes.titles(k, catalogue=...)``, an ``enum`` of every title; titles holding a double quote or a
backslash are left out, see ``shapes.llama_grammar``), so that each recommended title is a real item.  This prints,
side by side for free titles and for catalogues of growing size (the first N titles of ml-latest-small, then all of
them): the seconds to convert the schema to a grammar (llama.cpp parses it at the first reply, so that cost is in
the reply's seconds), the seconds of one constrained reply of SmolLM2-135M (k = 5, the chapter's first Table 3
prompt, temperature 0), its output tokens, and the share of its titles found in the catalogue.

    python benchmarks/bench_catalogue_grammar.py [--sizes 100,1000,all] [--k 5] [--threads 1]
"""

from __future__ import annotations

import argparse
import time

from recjudge.data.loaders import load_movielens
from recjudge.llm import shapes
from recjudge.llm.providers.local import LocalProvider
from recjudge.metamorphic import study
from recjudge.metamorphic.recommender import parse_titles

MODEL = "smollm2-135m-instruct-q4_1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,all")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    ml = load_movielens("latest-small")
    titles_all = ml.items["title"].drop_duplicates().tolist()
    # llama-cpp-python's grammar converter cannot hold these (shapes.llama_grammar refuses them)
    catalogue = [t for t in titles_all if '"' not in t and "\\" not in t]
    print(f"{len(titles_all) - len(catalogue)} of {len(titles_all):,} titles left out (a double quote or a backslash)")
    users = study.sample_users(ml.ratings, 1, seed=0)
    request = study.plan(ml.ratings, ml.items, users, iterations=1, tables=("3",))[0].requests[0]
    provider = LocalProvider(MODEL, n_threads=args.threads)
    provider.load()
    print(f"{'titles':>14} {'convert s':>10} {'reply s':>9} {'tokens':>7} {'in catalogue':>13} {'in shape':>9}",
          flush=True)
    for size in ["free", *args.sizes.split(",")]:
        titles = None if size == "free" else catalogue if size == "all" else catalogue[:int(size)]
        name = size if titles is None else f"{len(titles):,} titles"
        shape = shapes.titles(args.k, catalogue=titles)
        started = time.perf_counter()
        try:
            shapes.llama_grammar(shape.schema)
        except shapes.ShapeError as exc:
            print(f"{name:>14} grammar failed: {str(exc)[:200]}", flush=True)
            continue
        compiled = time.perf_counter() - started
        started = time.perf_counter()
        reply = provider.complete(request.messages, model=MODEL, temperature=0.0, seed=0,
                                  max_tokens=study.max_tokens_for(args.k, constrained=True),
                                  options={shapes.OPTION: shape.schema})
        asked = time.perf_counter() - started
        found = parse_titles(reply.text).titles
        share = sum(t in set(catalogue) for t in found) / max(len(found), 1)
        in_shape = shapes.check(shape, reply.text)[1] is None
        print(f"{name:>14} {compiled:10.2f} {asked:9.2f} {reply.output_tokens:7d} {share:13.0%} {str(in_shape):>9}",
              flush=True)

if __name__ == "__main__":
    main()
