"""Planted judges: their model's exact statistics against simulation, what they read in the book's prompts, their
server against the in-process answers, and (with the data mirror, as in CI) one planted judge through the reader's
path, `recjudge run --judge` over the loopback server, whose registry verdicts and numbers equal the simulation's."""

from __future__ import annotations

import json
import math
import os
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recjudge.planted import model
from recjudge.planted.judge import PlantedJudge, PlantedName, resolve
from recjudge.planted.key import PlantedKey, SerendipityTruth
from recjudge.planted.reading import UNKNOWN, read_messages
from recjudge.prompts import serendipity as seren_prompts
from recjudge.prompts import tokutake

ROOT = Path(__file__).resolve().parents[1]


def test_the_exact_correlation_and_errors_are_what_many_simulated_answers_give() -> None:
    truth = np.repeat([1.0, 2.0, 2.0, 3.0, 4.0, 5.0], 50)
    thresholds = model.thresholds_for(truth)
    rng = np.random.default_rng(1)
    z = (truth - truth.mean()) / truth.std()
    noise = rng.standard_normal((2000, len(truth)))
    answers = model.answers_of(z, noise, 0.4, thresholds, shift=0.3)
    simulated = np.mean([np.corrcoef(row, truth)[0, 1] for row in answers])
    assert model.pearson_of(truth, 0.4, thresholds, 0.3) == pytest.approx(simulated, abs=0.005)
    mae, accuracy = model.errors_of(truth, 0.4, thresholds, 0.3)
    assert mae == pytest.approx(np.abs(answers - truth).mean(), abs=0.005)
    assert accuracy == pytest.approx((model.three_class_of(answers) == model.three_class_of(truth)).mean(),
                                     abs=0.005)
    rho = model.solve_rho(truth, 0.25, thresholds)
    assert model.pearson_of(truth, rho, thresholds) == pytest.approx(0.25, abs=1e-9)


def test_a_planted_correlation_is_the_one_measured_when_prompts_cannot_tell_answers_apart() -> None:
    """Answers a prompt cannot tell apart get one answer, driven by their mean truth: the exact correlation with the
    individual truths is computed for that, and equals what simulated answers give."""
    truth = np.tile([1.0, 5.0, 2.0, 4.0, 3.0, 3.0], 60)
    groups = np.repeat(np.arange(len(truth) // 2), 2)  # each prompt shows two answers
    z = model.standardised(truth)
    driver = pd.Series(z).groupby(groups).transform("mean").to_numpy()
    thresholds = model.thresholds_for(truth)
    rng = np.random.default_rng(2)
    noise = rng.standard_normal((3000, len(truth) // 2))[:, groups]
    answers = model.answers_of(driver, noise, 0.6, thresholds)
    simulated = np.mean([np.corrcoef(row, truth)[0, 1] for row in answers])
    assert model.pearson_of(truth, 0.6, thresholds, driver=driver) == pytest.approx(simulated, abs=0.005)
    assert model.pearson_of(truth, 0.6, thresholds, driver=driver) < model.pearson_of(truth, 0.6, thresholds)


def test_the_shares_count_each_verdict_and_the_stale_inputs_skip_what_a_build_lacks() -> None:
    from recjudge.planted import characteristics, simulation

    claim = simulation.KANG_RQ1_LEAD
    per_seed = pd.DataFrame({"claim": claim, "planted": ["null"] * 4 + ["paper"] * 4, "profile": "paper",
                             "seed": [0, 1, 2, 3] * 2, "n": 2105,
                             "verdict": ["not testable here"] * 3 + ["reproduced"] + ["reproduced"] * 4})
    table = characteristics.shares(per_seed)
    assert table.columns.tolist() == characteristics.COLUMNS
    assert table[["planted", "verdict", "seeds", "share"]].values.tolist() == [
        ["null", "reproduced", 4, 0.25], ["null", "not testable here", 4, 0.75], ["paper", "reproduced", 4, 1.0]]
    recorded = {"the run plan": "a", "dataset serendipity-2018": "b", "seeds": "c"}
    current = {"the run plan": "x", "dataset serendipity-2018": characteristics.MISSING, "seeds": "c"}
    assert characteristics.stale_inputs(recorded, current) == ["the run plan"]
    assert characteristics.unchecked_inputs(current) == ["dataset serendipity-2018"]


def test_a_hash_gives_the_same_normal_alone_as_in_any_array() -> None:
    hashes = model.combined(7, model.text_hash("judge a"), np.arange(1000, dtype=np.uint64))
    together = model.normals(hashes)
    alone = np.array([model.normals(model.combined(7, model.text_hash("judge a"), np.uint64(i)))[()]
                      for i in range(1000)])
    assert np.array_equal(together, alone)
    assert abs(together.mean()) < 0.1 and together.std() == pytest.approx(1, abs=0.1)


def test_a_planted_name_says_its_value_seed_and_member() -> None:
    assert PlantedName.parse("planted-paper-3") == PlantedName("paper", 3, "a")
    assert PlantedName.parse("planted-null-0-b") == PlantedName("null", 0, "b")
    assert PlantedName.parse("planted-2.5-1") == PlantedName("2.5", 1, "a")
    assert str(PlantedName("null", 4, "c")) == "planted-null-4-c" and str(PlantedName("paper", 1)) == "planted-paper-1"
    assert PlantedName.parse("gpt-4o-mini") is None and PlantedName.parse("planted-huge-1") is None


MOVIES = pd.DataFrame({"title": ["Alien", "Heat", "Up", "Big"], "year": [1979, 1995, 2009, 1988],
                       "genres": [("Horror",), ("Crime",), ("Animation",), ("Comedy",)]},
                      index=pd.Index([1, 2, 3, 4], name="item_id"))


def kang(prompt: str, history: list[int], item: int, examples=None) -> list[dict[str, str]]:
    return seren_prompts.build_messages(prompt, "movies", seren_prompts.movie_history_text(history, MOVIES),
                                        seren_prompts.movie_item_text(item, MOVIES), examples)


def test_the_book_s_prompts_are_read_back_into_their_template_and_fields() -> None:
    shots = [{"history": "Alien (1979)", "item": "Up (2009), genres: Animation", "rating": 3}] * 5
    for prompt in ("kang_basic", "kang_llm4seren", "kang_serenprompt_1", "kang_serenprompt_2"):
        reading = read_messages(kang(prompt, [1, 2], 3))
        assert reading.template == prompt
        assert reading.fields["history"] == "Alien (1979), Heat (1995)"
        assert reading.fields["item"] == "Up (2009), genres: Animation"
    assert read_messages(kang("kang_fewshot", [], 4, shots)).fields["history"] == seren_prompts.EMPTY_HISTORY
    chain = tokutake.first_messages("ltm", "Alien (1979)", "Big (1988), genres: Comedy", "(examples)")
    for step in (2, 3):
        chain = tokutake.ltm_next_messages(chain, f"reply {step - 1}", step)
        reading = read_messages(chain)
        assert reading.template == f"tokutake_ltm_step{step}" and reading.fields["item"].startswith("Big (1988)")
    assert read_messages([{"role": "user", "content": "List ten movies like Heat."}]).template == UNKNOWN


def tiny_key(sog: float = 0.1) -> PlantedKey:
    """A key of six Serendipity-2018-like answers (no data needed)."""
    answers = pd.DataFrame({"user_id": [1, 1, 2, 2, 3, 3], "item_id": [1, 2, 3, 4, 1, 3],
                            "truth": [1.0, 2.0, 3.0, 5.0, 4.0, 2.0], "g": [1.0, 2.0, 3.0, 5.0, 4.0, 2.0]})
    histories = {0: [], 1: [1], 2: [], 3: [3], 4: [], 5: [1]}
    views: dict[tuple[str, str], list[int]] = {}
    full_views = []  # each answer's view with its whole history, the last one made for it
    for position, row in answers.iterrows():
        titles = [seren_prompts.movie_history_text([h], MOVIES) for h in histories[position]]
        for k in range(1, len(titles) + 1) if titles else (0,):
            history = ", ".join(titles[len(titles) - k:]) if k else seren_prompts.EMPTY_HISTORY
            views.setdefault((seren_prompts.movie_item_text(row["item_id"], MOVIES), history), []).append(position)
        full_views.append((seren_prompts.movie_item_text(row["item_id"], MOVIES), history))
    key = PlantedKey()
    key._parts["serendipity"] = SerendipityTruth(answers, {v: tuple(m) for v, m in views.items()}, sog,
                                                 full_views=full_views)
    return key


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(f"{url}/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def test_the_server_answers_what_the_judge_answers_in_process_and_counts_what_it_cannot_read() -> None:
    from recjudge.planted.server import PlantedServer

    key = tiny_key()
    prompts = [kang("kang_basic", [1], 2), kang("kang_basic", [3], 4), kang("kang_basic", [1], 3)]
    with PlantedServer(key) as server:
        replies = [post(server.base_url, {"model": "planted-paper-5", "messages": m, "logprobs": True,
                                          "top_logprobs": 20, "max_tokens": 1}) for m in prompts]
        again = post(server.base_url, {"model": "planted-paper-5", "messages": prompts[0]})
        unread = post(server.base_url, {"model": "planted-paper-5",
                                        "messages": [{"role": "user", "content": "Recommend a movie."}]})
        with pytest.raises(urllib.error.HTTPError) as refused:
            post(server.base_url, {"model": "gpt-4o-mini", "messages": prompts[0]})
    texts = [reply["choices"][0]["message"]["content"] for reply in replies]
    in_process = PlantedJudge(key, "paper").answer_prompts(resolve(key, [read_messages(m) for m in prompts]), 5)
    assert texts == [str(a) for a in in_process]
    assert all(reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"] == [{"token": t, "logprob": 0.0}]
               for reply, t in zip(replies, texts))
    assert again["choices"][0]["message"]["content"] == texts[0]
    assert unread["choices"][0]["message"]["content"] == "3" and server.unread == {"(no template)": 1}
    assert refused.value.code == 404


def test_a_prompt_two_answers_share_is_one_answer_to_the_judge_whose_truth_is_their_mean() -> None:
    key = tiny_key()
    prompts = resolve(key, [read_messages(kang("kang_basic", [], 1)), read_messages(kang("kang_basic", [], 3)),
                            read_messages(kang("kang_basic", [1], 3))])
    truth = key.serendipity.z["truth"]
    # users 1 and 3 saw movie 1 first; movie 3 with no history is user 2's answer, after movie 1 user 3's
    assert prompts["z"].tolist() == pytest.approx([truth[[0, 4]].mean(), truth[2], truth[5]])


# ------------------------------------------------------------------------------- the reader's path, end to end

MIRROR = os.environ.get("RECJUDGE_DATA_MIRROR")
needs_mirror = pytest.mark.skipif(not MIRROR or not (Path(MIRROR) / "serendipity-2018").is_dir(),
                                  reason="RECJUDGE_DATA_MIRROR with serendipity-2018 unset (CI sets it)")


def run_with_planted_judges(server_url: str, names: list[str], chapter: str, store: Path, work: Path
                            ) -> Path:
    """`recjudge run --judge FILE ... --profile check --only CHAPTER` with each planted judge (a judge file naming
    the loopback server), replies into ``store`` (never the committed one), from a run plan of the chapter's run
    alone (the pages that read its tables would only add time); returns the variant's results folder."""
    import subprocess

    import yaml

    plan = yaml.safe_load((ROOT / "runplan.yaml").read_text(encoding="utf-8"))
    plan["runs"] = [run for run in plan["runs"] if run["name"] == chapter]
    plan["profiles"] = {name: {run: changes for run, changes in (profile or {}).items() if run == chapter}
                        for name, profile in plan["profiles"].items()}
    (work / "runplan.yaml").write_text(yaml.safe_dump(plan, sort_keys=False), encoding="utf-8")
    files = []
    for name in names:
        files.append(work / f"{name}.yaml")
        files[-1].write_text(f"provider: openai\nmodel: {name}\nbase_url: {server_url}\n", encoding="utf-8")
    environment = {**os.environ, "RECJUDGE_STORE": str(store), "RECJUDGE_LLM_MODE": "auto",
                   "RECJUDGE_LLM_TIMEOUT": "300"}
    command = [str(ROOT / ".venv" / "bin" / "recjudge"), "run", "--runplan", str(work / "runplan.yaml"),
               *(option for file in files for option in ("--judge", str(file))), "--profile", "check",
               "--only", chapter]
    done = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    folder = next(line.split("-> ")[-1].strip() for line in done.stdout.splitlines() if " -> variants/" in line
                  and "executed" in line)
    return ROOT / folder / "results"


def verdict_inputs(evidence) -> list[tuple]:
    """What the rule reads of a claim's evidence, number for number: each deciding check's name, value and
    intervals (at 95% and at the level of the checks together), and whether anything is missing."""
    from recjudge.compendium.claim_evidence import deciding_checks, simultaneous_level

    checks = deciding_checks(evidence)
    together = simultaneous_level(len(checks))
    return [(c.name, c.value, c.interval, c.interval_at(together) if c.interval_at else None) for c in checks] + [
        ("missing", evidence.missing, evidence.not_run, evidence.n)]


def registry_reading(results: Path, claim: str, labels: list[str]):
    """The claim's evidence in a run's results folder, read with the reader's labels."""
    from recjudge.compendium import claims

    def load(chapter: str, table: str) -> pd.DataFrame:
        path = results / chapter / f"{table}.csv"
        if not path.is_file():
            raise FileNotFoundError(path)
        return pd.read_csv(path)

    return next(c for c in claims.CLAIMS if c.claim == claim).evidence(load, readers=labels, strict=False)


def same_numbers(real: list[tuple], simulated: list[tuple]) -> bool:
    """Equal, number for number (NaN equal to NaN)."""
    def flat(values):
        for value in values:
            if isinstance(value, (tuple, list)):
                yield from flat(value)
            else:
                yield value
    a, b = list(flat(real)), list(flat(simulated))
    return len(a) == len(b) and all(x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x)
                                               and math.isnan(y)) for x, y in zip(a, b))


@needs_mirror
def test_a_planted_judge_through_the_readers_path_gets_the_verdicts_the_simulation_gives(tmp_path: Path) -> None:
    """One run of `recjudge run --judge` at the check profile over the loopback server, with a planted null judge
    and a planted judge of an effect far larger than the paper's (at check scale only such an effect is decided):
    the registry calls the null not testable and the effect reproduced, from the same numbers as in process."""
    import shutil

    from recjudge.compendium.claim_evidence import NOT_TESTABLE, REPRODUCED, verdict
    from recjudge.planted import simulation
    from recjudge.planted.server import PlantedServer

    claim = simulation.KANG_RQ1_LEAD
    key = PlantedKey()
    key.serendipity  # built before the first request
    names = {"null": "planted-null-0", "10": "planted-10-0"}
    with PlantedServer(key) as server:
        results = run_with_planted_judges(server.base_url, list(names.values()), "proxy_vs_llm", tmp_path / "store",
                                          tmp_path)
    try:
        simulated = simulation.simulation(claim)
        prepared = simulated.prepare(key, "check")
        verdicts = {}
        for value, name in names.items():
            real = registry_reading(results, claim, [name])
            mine = simulated.evidence(prepared, PlantedJudge(key, value), 0)
            assert same_numbers(verdict_inputs(real), verdict_inputs(mine)), (verdict_inputs(real),
                                                                             verdict_inputs(mine))
            verdicts[value] = verdict(real)
        assert verdicts == {"null": NOT_TESTABLE, "10": REPRODUCED}
    finally:
        shutil.rmtree(results.parent)


@pytest.mark.skipif(os.environ.get("RECJUDGE_PLANTED_PATHS") != "1",
                    reason="every claim's chapter through the reader's path takes five to ten minutes: "
                           "RECJUDGE_PLANTED_PATHS=1 runs it")
@needs_mirror
def test_every_simulated_claim_reads_the_numbers_of_the_readers_path(tmp_path: Path) -> None:
    """For every claim the operating characteristics simulate, one run of its chapter through `recjudge run --judge`
    at the check profile with planted paper judges gives the registry the same verdict inputs, number for number,
    as the in-process simulation of the same seed."""
    import shutil

    from recjudge.compendium.claim_evidence import verdict
    from recjudge.planted import simulation
    from recjudge.planted.server import PlantedServer

    key = PlantedKey()
    for part in ("serendipity", "recsys", "explanations"):
        getattr(key, part)
    judge = PlantedJudge(key, "paper")
    chapters = dict.fromkeys(s.chapter for s in simulation.SIMULATIONS)
    differing = []
    with PlantedServer(key) as server:
        for chapter in chapters:
            claims = [s for s in simulation.SIMULATIONS if s.chapter == chapter]
            names = claims[0].labels("paper", 0)
            (tmp_path / chapter).mkdir()
            results = run_with_planted_judges(server.base_url, names, chapter, tmp_path / "store", tmp_path / chapter)
            try:
                for simulated in claims:
                    real = registry_reading(results, simulated.claim, names)
                    mine = simulated.evidence(simulated.prepare(key, "check"), judge, 0)
                    if not (same_numbers(verdict_inputs(real), verdict_inputs(mine)) and verdict(real) ==
                            verdict(mine)):
                        differing.append((simulated.claim, verdict_inputs(real), verdict_inputs(mine)))
            finally:
                shutil.rmtree(results.parent)
    assert not differing, differing


@needs_mirror
def test_every_simulated_claim_finds_every_table_it_reads() -> None:
    """A claim whose reader came to read another table (the ranking claim, the paper's printed Table 3) found none
    among the simulated ones and was "not run in this build" for every seed: the operating characteristics measured
    nothing. Each simulated claim, at the check profile, reads only tables the simulation holds or its context."""
    from recjudge.compendium.claim_evidence import NOT_RUN, verdict
    from recjudge.planted import simulation

    key = PlantedKey()
    prepared = simulation.prepared_once(key)
    not_run = [simulated.claim for simulated in simulation.SIMULATIONS
               if verdict(simulated.evidence(prepared(simulated, "check"), PlantedJudge(key, "paper"), 0)) == NOT_RUN]
    assert not_run == []
