"""The rule's operating characteristics: how often each verdict is given, per claim, planted value and profile, over
many seeds of planted judges (:mod:`recjudge.planted.simulation`), and the fingerprint of what they were computed
from.

``scripts/planted_characteristics.py`` regenerates, from scratch, the two tables of ``results/planted_judges/``:

- ``verdicts.csv``: one row per claim, planted value, profile and seed, with the verdict the registry gave;
- ``operating_characteristics.csv``: one row per claim, planted value, profile and verdict given (``n``: the answers,
  texts or users the claim's comparison rests on at that profile; ``seeds``; ``share``: of the seeds);
- ``planted_effects.csv``: what each planted value plants, per claim, in the claim's own terms,

and ``inputs.json``, the digest of every input they depend on (:func:`input_digests`): the package's code that reads
prompts, computes the chapters' tables and decides the verdicts, the run plan's profiles, the papers' tables, the
prompt templates, the data and the committed response store. The chapter reads the tables and never simulates; it
names the inputs whose digest differs from the one recorded (:func:`stale_inputs`), and a test requires none.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import pandas as pd

from recjudge.compendium.claim_evidence import VERDICTS, verdict
from recjudge.planted import effects
from recjudge.planted.effects import PLANTED_VALUES
from recjudge.planted.judge import PlantedJudge
from recjudge.planted.key import PlantedKey
from recjudge.planted.simulation import PROFILES, SIMULATIONS, ClaimSimulation, prepared_once

#: The chapter whose results folder holds the tables.
CHAPTER = "planted_judges"
TABLE, VERDICTS_TABLE, EFFECTS_TABLE = "operating_characteristics", "verdicts", "planted_effects"
INPUTS_FILE = "inputs.json"
COLUMNS = ["claim", "planted", "profile", "n", "seeds", "verdict", "share"]
#: Seeds per profile (a claim whose tables take seconds per seed draws at most its ``most_seeds``).
SEEDS = {"check": 40, "default": 40, "paper": 40}

#: What the tables depend on, under the project's root: the code that reads prompts, builds the chapters' tables the
#: claims read and decides their verdicts, the profiles, the papers' numbers and the templates.
SOURCES = {
    "planted judges": ["src/recjudge/planted"],
    "the claims' rule and readers": ["src/recjudge/compendium/claim_evidence.py",
                                     "src/recjudge/compendium/claim_readers.py", "src/recjudge/compendium/claims.py",
                                     "src/recjudge/compendium/comparisons.py",
                                     "src/recjudge/compendium/trust_rules.py"],
    "the chapters' analysis": ["src/recjudge/serendipity", "src/recjudge/explanations", "src/recjudge/recsys",
                               "src/recjudge/trust", "src/recjudge/metaeval", "src/recjudge/llm/parsing.py",
                               "src/recjudge/data"],
    "the prompts": ["src/recjudge/prompts"],
    "the papers' numbers": ["src/recjudge/papers"],
    "the run plan": ["runplan.yaml"],
    "the committed recommendation lists": ["data/recsys"],
}
#: The digest of a dataset this build does not hold (``runplan.fingerprints.dataset_fingerprint``'s word).
MISSING = "missing"
#: The datasets the simulated chapters read (``recjudge data list``).
DATASETS = ("serendipity-2018", "movielens-latest-small", "movielens-latest-2018-movies",
            "llm-explanation-eval-lu2023")


def _digest_paths(root: Path, paths: Iterable[str]) -> str:
    """One sha256 of the files under ``paths`` (their relative names and bytes; caches and hidden files left out)."""
    digest = hashlib.sha256()
    for entry in paths:
        base = root / entry
        files = sorted(p for p in ([base] if base.is_file() else base.rglob("*")) if p.is_file()
                       and "__pycache__" not in p.parts and not any(part.startswith(".") for part in
                                                                    p.relative_to(root).parts))
        for path in files:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def input_digests(seeds: dict[str, int] | None = None) -> dict[str, str]:
    """The digest of each input of the tables (module docstring), by name; ``seeds``: the seeds per profile."""
    from recjudge.compendium.runplan.fingerprints import FileHasher, dataset_fingerprint, store_fingerprint
    from recjudge.paths import project_root

    root = project_root()
    hasher = FileHasher()
    digests = {name: _digest_paths(root, paths) for name, paths in SOURCES.items()}
    for name in DATASETS:
        found = dataset_fingerprint(name, hasher)
        digests[f"dataset {name}"] = (MISSING if found == MISSING else
                                      hashlib.sha256(json.dumps(found, sort_keys=True).encode()).hexdigest())
    digests["the committed response store"] = store_fingerprint(root, hasher)
    digests["seeds"] = json.dumps(seeds or SEEDS, sort_keys=True)
    return digests


def stale_inputs(recorded: dict[str, str], current: dict[str, str]) -> list[str]:
    """The inputs whose digest differs from the recorded one (or that either lacks); a dataset this build does not
    hold (``MISSING``) cannot be compared and is not listed (:func:`unchecked_inputs`)."""
    return sorted(name for name in set(recorded) | set(current)
                  if current.get(name) != MISSING and recorded.get(name) != current.get(name))


def unchecked_inputs(current: dict[str, str]) -> list[str]:
    """The inputs this build cannot compare: datasets it does not hold."""
    return sorted(name for name, digest in current.items() if digest == MISSING)


def characteristics(seeds: dict[str, int] | None = None, simulations: Sequence[ClaimSimulation] = SIMULATIONS,
                    planted: Sequence[str] = PLANTED_VALUES, profiles: Sequence[str] = PROFILES,
                    key: PlantedKey | None = None, log: Callable[[str], None] = print
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every seed's verdict (``verdicts``: claim, planted, profile, seed, n, verdict) and their shares (``COLUMNS``,
    one row per verdict given, in the order of ``claim_evidence.VERDICTS``)."""
    seeds = seeds or SEEDS
    key = key or PlantedKey()
    judges = {value: PlantedJudge(key, value) for value in planted}
    prepared = prepared_once(key)
    rows = []
    for profile in profiles:
        for simulated in simulations:
            ready = prepared(simulated, profile)
            n = simulated.answers(ready)
            drawn = min(seeds[profile], simulated.most_seeds or seeds[profile])
            for value, judge in judges.items():
                for seed in range(drawn):
                    rows.append({"claim": simulated.claim, "planted": value, "profile": profile, "seed": seed,
                                 "n": n, "verdict": verdict(simulated.evidence(ready, judge, seed))})
            log(f"{profile}: {simulated.claim} (n = {n:,})")
    per_seed = pd.DataFrame(rows)
    return per_seed, shares(per_seed)


def shares(per_seed: pd.DataFrame) -> pd.DataFrame:
    """The share of seeds giving each verdict, per claim, planted value and profile (``COLUMNS``)."""
    order = {name: i for i, name in enumerate(VERDICTS)}
    table = (per_seed.groupby(["claim", "planted", "profile", "n", "verdict"], sort=False).size()
             .rename("count").reset_index())
    table["seeds"] = table.groupby(["claim", "planted", "profile"])["count"].transform("sum")
    table["share"] = table["count"] / table["seeds"]
    table = table.assign(_order=table["verdict"].map(order)).sort_values(
        ["claim", "planted", "profile", "_order"], key=lambda column: column if column.name != "claim" else
        column.map({s.claim: i for i, s in enumerate(SIMULATIONS)}), kind="mergesort")
    return table[COLUMNS].reset_index(drop=True)


def planted_effects(key: PlantedKey, planted: Sequence[str] = PLANTED_VALUES) -> pd.DataFrame:
    """What each planted value plants, per claim, in the claim's own terms (claim, planted, effect, value): the
    numbers the chapter shows beside the shares (``PlantedJudge``'s parameters, solved from the key)."""
    from recjudge.compendium.claim_readers import labels_saved_per_100
    from recjudge.planted import simulation as sim

    rows = []
    for value in planted:
        judge = PlantedJudge(key, value)
        kang, tokutake, zhang = judge.kang, judge.tokutake, judge.zhang
        levels = judge.recsys_levels
        printed = list(effects.tokutake_avg_scores().index)
        entries = [
            (sim.KANG_RQ1_LEAD, "zero-shot correlation with the users (Pearson, %)", 100 * kang["r_plain"]),
            (sim.KANG_RQ1_LEAD, "SOG's correlation with the users over every answer (Pearson, %)",
             100 * key.serendipity.sog_pearson),
            (sim.KANG_RQ1_GAIN, "gain over SOG (%)", 100 * (kang["r_plain"] / key.serendipity.sog_pearson - 1)),
            (sim.KANG_RQ2, "gain with auxiliary data (points of Pearson)",
             100 * (kang["r_auxiliary"] - kang["r_plain"])),
            (sim.KANG_RQ3, "the mean of three judges over judge a (ratio of correlations)",
             kang["r_average"] / kang["r_single"]),
            (sim.KANG_RQ3, "the noise every judge shares (q)", kang["q"]),
            *((sim.TOKUTAKE_COT, f"MAE of {effects.STRATEGY_NAMES[strategy]}", row["mae"])
              for strategy, row in tokutake.iterrows()),
            *((sim.TOKUTAKE_RANKING, f"mean score of {name}'s top 20", float(levels[name])) for name in printed),
            (sim.ZHANG_LLMS, "lead over ROUGE-1-F, mean over the aspects (points of Pearson)",
             100 * float((zhang["pearson"] - pd.Series(key.explanations.reference_pearson)).mean())),
            (sim.LABELS_SAVED, "labels saved per 100 (ρ² rule)", labels_saved_per_100(kang["r_plain"])),
        ]
        rows += [{"claim": claim, "planted": value, "effect": effect, "value": float(number)}
                 for claim, effect, number in entries]
    return pd.DataFrame(rows)


def write(per_seed: pd.DataFrame, table: pd.DataFrame, planted: pd.DataFrame, digests: dict[str, str],
          folder: Path) -> None:
    """The tables and the inputs' digests into ``folder`` (as ``save_table`` writes a table)."""
    folder.mkdir(parents=True, exist_ok=True)
    table.to_csv(folder / f"{TABLE}.csv", index=False, float_format="%.6g")
    planted.to_csv(folder / f"{EFFECTS_TABLE}.csv", index=False, float_format="%.6g")
    per_seed.to_csv(folder / f"{VERDICTS_TABLE}.csv", index=False)
    (folder / INPUTS_FILE).write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
