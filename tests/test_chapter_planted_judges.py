"""The page of the chapter "Would this book recognise a capable judge?": its rates and their intervals, the rules
that choose its words, its table and its figure, on a small table of verdicts made up here (it describes nothing)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from statsmodels.stats.proportion import proportion_confint  # noqa: E402

from recjudge.chapters import planted_judges as page  # noqa: E402
from recjudge.compendium import figures  # noqa: E402
from recjudge.compendium.claim_evidence import NOT_TESTABLE, REPRODUCED  # noqa: E402
from recjudge.planted import characteristics, simulation  # noqa: E402

LEAD, RANKING = simulation.KANG_RQ1_LEAD, simulation.TOKUTAKE_RANKING


def verdicts(claim: str, profile: str, n: int, paper_hits: int, null_hits: int, seeds: int = 20) -> list[dict]:
    """``seeds`` seeds per planted value, the first ``paper_hits`` (``null_hits``) of them reproduced."""
    return [{"claim": claim, "planted": planted, "profile": profile, "seed": seed, "n": n,
             "verdict": REPRODUCED if seed < hits else NOT_TESTABLE}
            for planted, hits in (("paper", paper_hits), ("null", null_hits)) for seed in range(seeds)]


@pytest.fixture
def per_seed() -> pd.DataFrame:
    # listed out of order: the rates come in the simulations' order of claims, profiles smallest first
    rows = (verdicts(RANKING, "paper", 15, 6, 0, seeds=10) + verdicts(LEAD, "paper", 2105, 20, 1)
            + verdicts(LEAD, "default", 200, 9, 0) + verdicts(LEAD, "check", 10, 0, 0)
            + verdicts(RANKING, "default", 15, 2, 5, seeds=10) + verdicts(RANKING, "check", 3, 0, 0, seeds=10))
    return pd.DataFrame(rows)


@pytest.fixture
def results(tmp_path, monkeypatch):
    from recjudge import paths

    monkeypatch.setenv(paths.RESULTS_ENV, str(tmp_path))
    monkeypatch.delenv("RECJUDGE_RUN_NAME", raising=False)
    return tmp_path


def test_the_rates_are_the_shares_of_seeds_reproduced_with_wilson_intervals(per_seed: pd.DataFrame) -> None:
    rates = page.rates(per_seed)
    assert rates[["claim", "profile"]].values.tolist() == [
        [LEAD, "check"], [LEAD, "default"], [LEAD, "paper"], [RANKING, "check"], [RANKING, "default"],
        [RANKING, "paper"]]
    lead_default = rates.iloc[1]
    assert (lead_default["n"], lead_default["power_seeds"], lead_default["power"]) == (200, 20, 0.45)
    assert (lead_default["power_low"], lead_default["power_high"]) == pytest.approx(
        proportion_confint(9, 20, alpha=0.05, method="wilson"))
    ranking_default = rates.iloc[4]
    assert (ranking_default["false"], ranking_default["false_seeds"]) == (0.5, 10)
    assert ranking_default["false_low"] == pytest.approx(proportion_confint(5, 10, method="wilson")[0])


def test_the_words_say_what_each_profile_decides_and_where_the_rule_errs(per_seed: pd.DataFrame) -> None:
    rates = page.rates(per_seed)
    short = {claim: page.SHORT_NAMES[claim] for claim in (LEAD, RANKING)}
    assert page.decided_at(rates, "paper") == [short[LEAD]]
    assert page.decided_at(rates, "check") == []
    # 5 of 10 null seeds reproduced: the interval's lower end (about 24%) lies above 5%; 1 of 20 is within noise
    assert page.erring(rates)[["short", "profile"]].values.tolist() == [[short[RANKING], "default"]]
    found = page.findings(rates, per_seed)
    assert found["favourable"] == REPRODUCED
    assert found["decided_paper"] == short[LEAD]
    assert found["decided_check"] == "none"
    assert found["erring"] == f"{short[RANKING]} (default)"
    assert found["largest_false"] == "50% [24, 76]"
    assert found["largest_false_where"] == f"{short[RANKING]}, default profile"
    assert found["seeds_range"] == "10–20"
    assert found["too_few"] == (f"1 claim is left undecided even at the paper profile, which judges every answer the "
                                f"data hold: {short[RANKING]} (60% of seeds; most often “{REPRODUCED}”)")


def test_a_list_and_the_claims_needing_more_answers_read_as_sentences() -> None:
    assert page.listed([]) == "none"
    assert page.listed(["a", "b", "c"]) == "a, b and c"
    assert page.too_few_sentence([]) == "No claim is left undecided at the paper profile"
    assert page.too_few_sentence(["a", "b"]).startswith("2 claims are left undecided even at the paper profile")


def test_the_page_names_stale_inputs_and_datasets_it_cannot_compare() -> None:
    assert page.freshness([], []).data == ""
    text = page.freshness(["the run plan"], ["dataset serendipity-2018"]).data
    assert "older than this build's the run plan" in text
    assert "scripts/planted_characteristics.py" in text
    assert "holds no serendipity-2018" in text


def test_the_table_and_figure_are_made_and_the_table_saved(per_seed: pd.DataFrame, results) -> None:
    rates = page.rates(per_seed)
    table = page.show_rates(rates, "planted_judges")
    saved = pd.read_csv(results / "planted_judges" / "power_and_false_verdicts.csv")
    assert saved["power"].tolist() == pytest.approx(rates["power"].tolist())
    assert "45% [26, 66]" in table.data.to_numpy().ravel().tolist()
    fig = figures.assert_legible(page.figure(rates))
    assert len(fig.axes) == len(simulation.PROFILES)
    assert [tick.get_text() for tick in fig.axes[0].get_yticklabels()] == [
        page.SHORT_NAMES[LEAD], page.SHORT_NAMES[RANKING]]


def test_the_tables_are_read_back_as_written_and_a_missing_one_is_named(per_seed: pd.DataFrame, tmp_path) -> None:
    folder = tmp_path / "planted_judges"
    effects = pd.DataFrame({"claim": [LEAD, LEAD], "planted": ["null", "paper"], "effect": ["r", "r"],
                            "value": [0.1, 0.2]})
    characteristics.write(per_seed, characteristics.shares(per_seed), effects, {"seeds": "{}"}, folder)
    read, shares, planted, inputs = page.load_tables(folder)
    assert set(read["planted"]) == {"null", "paper"}, "the planted value null is read as text, not as missing"
    assert planted["planted"].tolist() == ["null", "paper"]
    assert inputs == {"seeds": "{}"}
    (folder / "verdicts.csv").unlink()
    with pytest.raises(FileNotFoundError, match="verdicts.csv missing"):
        page.load_tables(folder)
