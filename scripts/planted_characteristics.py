"""Regenerate the planted judges' operating characteristics from scratch: results/planted_judges/
operating_characteristics.csv, verdicts.csv and inputs.json (``recjudge.planted.characteristics``).

Every LLM claim the registry decides with a reader's judge, planted null and paper, at the check, default and paper
profiles, for the seeds ``characteristics.SEEDS`` gives; drawn in process through the chapters' own analysis and the
claims registry (``recjudge.planted.simulation``), never through a server. It needs the data mirror::

    RECJUDGE_DATA_MIRROR=/path/to/mirror .venv/bin/python scripts/planted_characteristics.py

``--seeds N`` draws N seeds at every profile (a quick look; the committed tables use the default).
"""

from __future__ import annotations

import argparse
import sys
import time

from recjudge.paths import project_root
from recjudge.planted import characteristics
from recjudge.planted.key import PlantedKey


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None, help="seeds at every profile (default: "
                                                                f"{characteristics.SEEDS})")
    args = parser.parse_args(argv)
    seeds = ({profile: args.seeds for profile in characteristics.SEEDS} if args.seeds
             else dict(characteristics.SEEDS))
    start = time.monotonic()
    key = PlantedKey()
    per_seed, table = characteristics.characteristics(
        seeds, key=key,
        log=lambda line: print(f"[{time.monotonic() - start:6.0f} s] {line}", file=sys.stderr, flush=True))
    folder = project_root() / "results" / characteristics.CHAPTER
    characteristics.write(per_seed, table, characteristics.planted_effects(key), characteristics.input_digests(seeds),
                          folder)
    print(f"{len(per_seed):,} verdicts in {time.monotonic() - start:.0f} s -> {folder}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
