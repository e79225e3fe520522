"""The claims registry: one rule chooses every verdict from a record's fields, every verdict is reachable, a changed
number flips it, and a reordered or missing table cannot put another number in a claim."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from recjudge.compendium import claim_evidence, claims
from recjudge.compendium.claim_evidence import Check, Difference, Evidence, verdict
from recjudge.compendium.results import load_table


def reversed_tables(chapter: str, table: str) -> pd.DataFrame:
    return load_table(chapter, table).iloc[::-1].reset_index(drop=True)


def claim(table: str, starts: str = "") -> claims.Claim:
    return next(c for c in claims.CLAIMS if c.table == table and c.claim.startswith(starts))


def changed(chapter: str, table: str, change) -> claim_evidence.Loader:
    """The committed tables, with ``change`` applied to one of them."""
    def load(c: str, t: str) -> pd.DataFrame:
        frame = load_table(c, t)
        return change(frame) if (c, t) == (chapter, table) else frame
    return load


HOLDS, FAILS = Check("holds", 1.0, high=2.0), Check("fails", 3.0, high=2.0)


@pytest.mark.parametrize(("evidence", "expected"), [
    (Evidence(checks=(HOLDS, HOLDS)), claim_evidence.REPRODUCED),
    (Evidence(checks=(HOLDS, FAILS)), claim_evidence.PARTLY),
    (Evidence(checks=(FAILS,)), claim_evidence.NOT_REPRODUCED),
    (Evidence(checks=(HOLDS,), paper_checks=(HOLDS, FAILS)), claim_evidence.CONTRADICTED),
    (Evidence(checks=(HOLDS,), differences=(Difference("tuning budget", "3 trials", "100 trials", blocks=True),)),
     claim_evidence.NOT_COMPARABLE),
    (Evidence(checks=(HOLDS,), differences=(Difference("data", "a sample", "all of it"),)), claim_evidence.REPRODUCED),
    (Evidence(missing="a capable LLM"), claim_evidence.NOT_TESTABLE),
    (Evidence(missing="a capable LLM", paper_checks=(FAILS,)), claim_evidence.CONTRADICTED),
    (Evidence(paper_checks=(HOLDS, FAILS), paper_text=True), claim_evidence.CONTRADICTED_BY_TEXT),
    (Evidence(paper_checks=(HOLDS, HOLDS)), claim_evidence.REPRODUCED),
    (Evidence(not_run="results/x/y.csv does not exist", checks=(HOLDS,)), claim_evidence.NOT_RUN),
])
def test_every_verdict_is_reachable_by_the_one_rule(evidence, expected):
    assert verdict(evidence) == expected


def test_the_rule_reaches_every_verdict_of_the_list():
    reached = {verdict(Evidence(checks=(HOLDS,))), verdict(Evidence(checks=(HOLDS, FAILS))),
               verdict(Evidence(checks=(FAILS,))), verdict(Evidence(paper_checks=(FAILS,), checks=(HOLDS,))),
               verdict(Evidence(paper_checks=(FAILS,), paper_text=True)),
               verdict(Evidence(checks=(HOLDS,), differences=(Difference("a", "b", "c", blocks=True),))),
               verdict(Evidence(missing="x")), verdict(Evidence(not_run="x"))}
    assert reached == set(claim_evidence.VERDICTS)


def test_a_record_with_nothing_to_decide_it_is_an_error_not_a_verdict():
    with pytest.raises(ValueError, match="needs checks"):
        verdict(Evidence(ours="some words"))


def test_a_nan_never_holds():
    assert not Check("nan", math.nan, high=1.0).holds()


def test_the_reason_names_what_is_missing_what_blocks_and_what_fails():
    assert claim_evidence.reason(Evidence(missing="a capable LLM")) == "needs a capable LLM"
    blocking = Difference("tuning budget", "3 trials", "100 trials", blocks=True)
    assert claim_evidence.reason(Evidence(checks=(HOLDS,), differences=(blocking,))) == \
        "tuning budget: 3 trials here, 100 trials in the paper"
    assert claim_evidence.reason(Evidence(paper_checks=(HOLDS, FAILS))) == \
        "the paper's own numbers: 1 of 2 hold (failing: fails)"


@pytest.mark.parametrize("one", claims.CLAIMS, ids=lambda c: c.claim[:40])
def test_a_claim_reads_its_numbers_by_name_and_says_when_its_table_is_missing(one):
    pd.testing.assert_series_equal(pd.Series(claims.record(one, load_table)),
                                   pd.Series(claims.record(one, reversed_tables)))

    def gone(chapter: str, table: str) -> pd.DataFrame:
        raise FileNotFoundError(f"results/{chapter}/{table}.csv does not exist")

    missing = claims.record(one, gone)
    assert missing["verdict"] == claim_evidence.NOT_RUN and "does not exist" in missing["reason"]


def test_the_committed_verdicts_of_the_audited_claims():
    found = claims.registry(load_table).set_index("claim")["verdict"]
    # Kang et al.'s own Table 2: 1 of 4 gains over SOG lie in 75-125%, 10 of 38 correlations are not significant
    assert found[claim("paper_claim_gain_over_sog").claim] == claim_evidence.CONTRADICTED
    assert found[claim("paper_claim_significance").claim] == claim_evidence.CONTRADICTED
    # ML-1M's order: 0-8 TPE trials per fold against the paper's 100
    assert found[claim("order_vs_paper_1m").claim] == claim_evidence.NOT_COMPARABLE
    # DESR's Pearson (-2.3%) is below Random's
    assert found[claim("agreement_all_answers", "Every proxy metric").claim] == claim_evidence.PARTLY
    # its Table 3 judge (GPT-4o-mini, CoT) errs more on g than answering 2 every time (its Table 1)
    assert found[claim("paper_claim_avg_score_vs_g").claim] == claim_evidence.CONTRADICTED
    assert found[claim("metrics", "Chain-of-thought").claim] == claim_evidence.CONTRADICTED
    assert found[claim("ordering_check").claim] == claim_evidence.REPRODUCED


def test_the_gain_claim_counts_the_papers_own_gains_and_flips_when_they_are_about_100():
    records = claims.registry(load_table).set_index("table")
    assert records.loc["paper_claim_gain_over_sog", "paper_checks_holding"] == 1
    assert records.loc["paper_claim_gain_over_sog", "paper_checks_total"] == 4
    about_100 = changed("proxy_vs_llm", "paper_claim_gain_over_sog", lambda f: f.assign(gain_over_sog_pct=100.0))
    # then the claim is no longer contradicted, and still needs a capable LLM here
    assert claims.record(claim("paper_claim_gain_over_sog"), about_100)["verdict"] == claim_evidence.NOT_TESTABLE


def test_a_changed_number_flips_the_verdict():
    bleu = claim("table1_agreement_by_row", "The BLEU")

    def gaps(values: dict[str, float]) -> claim_evidence.Loader:
        return changed("explanation_evaluators", "table1_agreement_by_row", lambda f: f.assign(
            mean_abs_difference=f["evaluator"].map(values).fillna(f["mean_abs_difference"])))

    rows = ("BLEU-1", "BLEU-4", "ROUGE-1-F", "ROUGE-L-F")
    assert claims.record(bleu, gaps({r: 0.5 for r in rows}))["verdict"] == claim_evidence.REPRODUCED
    assert claims.record(bleu, gaps({"BLEU-4": 9.0, "BLEU-1": 0.5}))["verdict"] == claim_evidence.PARTLY
    assert claims.record(bleu, gaps({r: 9.0 for r in rows}))["verdict"] == claim_evidence.NOT_REPRODUCED

    order = claim("order_vs_paper_1m")
    full_budget = changed("recommender_reevaluation", "tuned_values_1m", lambda f: f.assign(trials=100))
    assert claims.record(order, full_budget)["verdict"] == claim_evidence.NOT_REPRODUCED  # τ 0.07, p 1.00

    def agreeing(chapter: str, table: str) -> pd.DataFrame:
        frame = full_budget(chapter, table)
        return frame.assign(tau=0.87, p=0.02) if table == "order_vs_paper_1m" else frame

    assert claims.record(order, agreeing)["verdict"] == claim_evidence.REPRODUCED

    proxies = claim("agreement_all_answers", "Every proxy metric")
    desr_up = changed("proxy_vs_llm", "agreement_all_answers", lambda f: f.assign(
        pearson_pct=f["pearson_pct"].where(f["method"] != "DESR", 3.0)))
    assert claims.record(proxies, desr_up)["verdict"] == claim_evidence.REPRODUCED


def test_a_claim_whose_row_is_missing_or_doubled_is_an_error_not_another_number():
    proxies = claim("agreement_all_answers", "Every proxy metric")
    without = changed("proxy_vs_llm", "agreement_all_answers", lambda f: f[f["method"] != "DESR"])
    with pytest.raises(KeyError, match="method = 'DESR', found 0"):
        claims.record(proxies, without)
    doubled = changed("proxy_vs_llm", "agreement_all_answers",
                      lambda f: pd.concat([f, f[f["method"] == "SOG"]], ignore_index=True))
    with pytest.raises(KeyError, match="found 2"):
        claims.record(proxies, doubled)


def test_the_registry_holds_the_claims_the_book_examines():
    records = claims.registry(load_table)
    assert records["claim"].is_unique
    assert set(records["verdict"]) <= set(claim_evidence.VERDICTS)
    cv = records.set_index("table").loc["paper_claim_coefficients_of_variation"]
    for printed in ("13.6%", "29.9%", "13.8%", "20.7%"):
        assert printed in cv["paper_numbers"]
    assert cv["paper_checks_holding"] == cv["paper_checks_total"] == 4


def test_the_committed_registry_is_what_the_page_shows():
    from recjudge.compendium.results import results_path

    committed = results_path("at_a_glance", "claims").read_text(encoding="utf-8")
    assert claims.registry(load_table).to_csv(index=False, float_format="%.6g") == committed


def test_a_claims_matrix_links_each_claim_to_its_chapter_and_csv():
    text = claims.matrix_markdown(claims.registry(load_table))
    assert "({doc}`chapter <normalised_surprise>`, {download}`table <../../results/normalised_surprise/" \
           "ordering_check.csv>`)" in text
    assert text.count("\n") == len(claims.CLAIMS) + 1


def test_no_verdict_word_is_typed_in_the_at_a_glance_builders():
    import inspect

    from recjudge.compendium import at_a_glance

    source = inspect.getsource(at_a_glance)
    for word in ('"reproduced"', "not reproduced", "not testable", "partly"):
        assert word not in source


@pytest.mark.parametrize("chapter", sorted({c.chapter for c in claims.CLAIMS}))
def test_every_chapter_that_examines_a_claim_opens_its_verdict_with_the_registrys_verdicts(chapter):
    from recjudge.paths import project_root

    source = (project_root() / "notebooks" / f"{chapter}.md").read_text(encoding="utf-8")
    box = source[source.index("{admonition} Verdict"):]
    assert box.index("{glue:md} claims_checked") < box.index("\n````\n")
    # a chapter that takes a reader's judges hands them on, so its verdicts say whose numbers they read
    call = ("claims.chapter_verdicts(NOTEBOOK, judges=judges)" if "\njudges = " in source else
            "claims.chapter_verdicts(NOTEBOOK)")
    assert f'glue("claims_checked", {call}, display=False)' in source


def test_a_chapters_verdicts_are_its_claims_records():
    text = claims.chapter_verdicts("recommender_reevaluation", load_table).data
    records = claims.for_chapter("recommender_reevaluation", load_table)
    # the answer to the chapter's question first, then one bullet per other claim
    assert text.count("\n- ") + 1 == len(records) == 3
    not_testable, not_comparable = claim_evidence.NOT_TESTABLE, claim_evidence.NOT_COMPARABLE
    assert text.startswith(f"**{not_testable[0].upper()}{not_testable[1:]}:** *An LLM judge ranks")
    assert f"**{not_comparable}**; Kendall's τ" in text and "tuning budget: 0–8 TPE trials per fold" in text


@pytest.mark.parametrize("chapter", sorted({c.chapter for c in claims.CLAIMS}))
def test_every_chapters_verdict_answers_first_in_at_most_four_bullets(chapter):
    text = claims.chapter_verdicts(chapter, load_table).data
    answer, *rest = text.split("\n")
    answering = claims.for_chapter(chapter, load_table).set_index("claim").loc[claims.ANSWERS[chapter]]
    # the first line is the answer: the verdict of the claim that answers the chapter's question, not a bullet
    assert answer.startswith(f"**{answering['verdict'][0].upper()}{answering['verdict'][1:]}:** "
                             f"*{claims.ANSWERS[chapter]}*")
    bullets = [line for line in rest if line.startswith("- ")]
    assert len(bullets) <= claims.MAX_VERDICT_BULLETS
    assert all(line.startswith("- ") for line in rest if line), "nothing but bullets after the answer"
    # no log-like counts of checks ("our numbers: 3 of 4 hold") and no table names a reader was not told
    assert not re.search(r"\d of \d+ hold\b|failing:|\w_\w", text), text


@pytest.mark.parametrize("chapter", sorted({c.chapter for c in claims.CLAIMS}))
def test_a_chapters_verdict_box_holds_only_its_question_and_the_registrys_answer(chapter):
    from recjudge.paths import project_root

    source = (project_root() / "notebooks" / f"{chapter}.md").read_text(encoding="utf-8")
    box = source[source.index("{admonition} Verdict"):]
    box = box[:box.index("\n````\n")]
    head, glued = box.split("```{glue:md} claims_checked\n:format: myst\n```")
    assert not glued.strip(), "the chapter's other findings go in the collapsed details below the box"
    question = head.split(":class: tip verdict\n", 1)[1].strip()
    assert question.startswith("*") and question.endswith("*") and "\n- " not in question


def test_a_chapter_with_claims_but_no_answering_claim_is_an_error(monkeypatch):
    monkeypatch.delitem(claims.ANSWERS, "normalised_surprise")
    with pytest.raises(KeyError, match="no claim answers"):
        claims.chapter_verdicts("normalised_surprise", load_table)


def test_a_variants_chapter_names_a_lacking_row_instead_of_failing():
    proxies = claim("agreement_all_answers", "Every proxy metric")
    without = changed("proxy_vs_llm", "agreement_all_answers", lambda f: f[f["method"] != "DESR"])
    found = claims.record(proxies, without, strict=False)
    assert found["verdict"] == claim_evidence.NOT_RUN and "DESR" in found["reason"]


def reader_variant(reader) -> claim_evidence.Loader:
    """The committed tables as a variant that ran ``reader`` beside the book's judge writes them: the reader's rows
    beside the book's judge's, with other numbers."""
    you, asks = reader.display_label, f"{reader.provider}:{reader.model}"

    def load(chapter: str, table: str) -> pd.DataFrame:
        frame = load_table(chapter, table)
        if (chapter, table) == ("prompt_strategies", "metrics"):
            frame = pd.concat([frame, frame.assign(judge=you, mae=0.1, n=30, n_unparsable=0)], ignore_index=True)
        if (chapter, table) == ("prompt_strategies", "judge_runs"):
            frame = pd.concat([frame, frame.assign(judge=you, items=20, unparsable=[1, 0, 2, 0])], ignore_index=True)
        if (chapter, table) == ("explanation_evaluators", "llm_runs"):
            frame = pd.concat([frame, frame.assign(model=asks, n_replies=10, n_unparsable=0)], ignore_index=True)
        return frame
    return load


def test_a_variants_verdicts_name_the_judge_they_read_and_the_readers_unparsable_share():
    from recjudge.llm.judge_spec import parse_judge

    reader = parse_judge("openai:gpt-4o-mini")
    load = reader_variant(reader)
    book = claims.chapter_verdicts("prompt_strategies", load_table).data
    variant = claims.chapter_verdicts("prompt_strategies", load, [reader.to_parameter()]).data
    strategies = next(line for line in variant.splitlines() if "Chain-of-thought" in line)
    assert f"read from {claims.BOOK_JUDGE_NUMBERS} numbers in this variant's tables, not your judge's" in strategies
    assert "gpt-4o-mini, 3 of 80 replies unparsable (3.8%)" in strategies
    # the claim reads the book's judge's rows only: the reader's MAE of 0.1 is not in its evidence
    ours = claims.for_chapter("prompt_strategies", load).set_index("claim")["ours"]
    assert ours.equals(claims.for_chapter("prompt_strategies", load_table).set_index("claim")["ours"])
    ground_truth = next(line for line in variant.splitlines() if "ground truth" in line)
    assert "read from no LLM judge's numbers" in ground_truth
    assert "Verdict read" not in book, "the committed book names no reader's judge"
    zhang = claims.chapter_verdicts("explanation_evaluators", reader_variant(reader), [reader]).data
    # (Tokutake's chain-of-thought claim is decided by the paper's own numbers: Zhang's LLM claim needs a judge)
    book_zhang = claims.chapter_verdicts("explanation_evaluators", load_table).data
    assert claim_evidence.NEEDS_A_CAPABLE_LLM in book_zhang and claim_evidence.NEEDS_A_CAPABLE_LLM not in zhang, \
        "a variant that ran a reader's judge does not say every judge here is tiny"
    evaluators = next(line for line in zhang.splitlines() if "as well as or better" in line)
    assert "gpt-4o-mini, 0 of 40 replies unparsable (0.0%)" in evaluators
    ours = claims.for_chapter("explanation_evaluators", reader_variant(reader)).set_index("claim")["ours"]
    assert ours.equals(claims.for_chapter("explanation_evaluators", load_table).set_index("claim")["ours"]), \
        "the book's judge's replies only: the reader's are counted in its own statement"


def test_a_readers_judge_whose_replies_a_chapter_does_not_count_is_said_so():
    from recjudge.llm.judge_spec import parse_judge

    reader = parse_judge("openai:gpt-4o-mini")
    assert claims.replies_of("recommender_reevaluation", reader) == "this chapter's tables do not count its replies"
    assert claims.replies_of("proxy_vs_llm", reader).startswith("no replies counted (proxy_vs_llm/judge_runs: no run")


def test_the_landing_page_opens_with_the_registrys_findings_as_committed():
    from recjudge.paths import project_root

    records = claims.registry(load_table)
    committed = (project_root() / "results" / "at_a_glance" / claims.LANDING_FILE).read_text(encoding="utf-8")
    assert committed == claims.landing_markdown(records)
    intro = (project_root() / "book" / "intro.md").read_text(encoding="utf-8")
    include = f"```{{include}} ../results/at_a_glance/{claims.LANDING_FILE}\n```"
    assert include in intro and intro.index(include) < intro.index("{admonition}"), "findings come first"
    bullets = committed.splitlines()
    assert len(bullets) == len(claims.LANDING_FINDINGS) == 5
    by_claim = records.set_index("claim")
    for bullet, finding in zip(bullets, claims.LANDING_FINDINGS):
        for claim_words in finding:
            row = by_claim.loc[claim_words]
            # the verdict the rule chose and the number behind it, never typed
            assert f"**{row['verdict'][0].upper()}{row['verdict'][1:]}:** {claim_words[0].lower()}" in bullet
            assert row["key_number"] in bullet
        assert bullet.endswith(f"{{doc}}`Chapter <notebooks/{by_claim.loc[finding[0], 'chapter']}>`")
    assert "10 of its 38 correlations are not significant" in bullets[1]
    assert "9.3% [4.2, 14.2]" in bullets[0] and "2,130 answers" in bullets[0]


def test_a_changed_number_changes_the_landing_finding():
    # A saving counts when the simulation's Monte Carlo bound and the ρ² rule both clear a whole label.
    recorded = lambda f, column, more: f[column].where(f["judge"] != "gpt-3.5-turbo (recorded)", f["n"] + more)  # noqa: E731
    saving = changed("trust_judges", "labels_worth", lambda f: f.assign(
        labels_worth=recorded(f, "labels_worth", 2.0), labels_worth_mc_low=recorded(f, "labels_worth_mc_low", 1.5),
        labels_worth_mc_high=recorded(f, "labels_worth_mc_high", 2.5),
        labels_worth_by_rho2=recorded(f, "labels_worth_by_rho2", 1.8)))
    text = claims.landing_markdown(claims.registry(saving))
    trust = text.splitlines()[-1]
    partly = claim_evidence.PARTLY
    assert trust.startswith(f"- **{partly[0].upper()}{partly[1:]}:** an LLM judge's scores save")
    assert "(selected: gpt-3.5-turbo (recorded)) is worth 102.0 labels, 2.0 more" in trust


def test_a_landing_finding_the_registry_lacks_is_an_error():
    records = claims.registry(load_table)
    with pytest.raises(KeyError, match="no claim 'Normalised surprise orders"):
        claims.landing_markdown(records[~records["claim"].str.startswith("Normalised surprise orders")])


def test_no_llm_judge_here_saves_a_label_and_the_authors_prompt_skips_transparency():
    found = claims.registry(load_table).set_index("claim")
    trust = found.loc["An LLM judge's scores save human labels"]
    assert trust["verdict"] == claim_evidence.NOT_REPRODUCED and trust["checks_holding"] == 0 and trust["n"] == 100
    prompt = found.loc["The LLM is asked about each aspect with the users' questionnaire statement"]
    assert prompt["verdict"] == claim_evidence.CONTRADICTED_BY_TEXT, "a prompt is text, not the paper's numbers"
    assert prompt["reason"].startswith("the authors' own text: 3 of 4 hold")
    assert (prompt["paper_checks_holding"], prompt["paper_checks_total"]) == (3, 4)
    assert "never asks about transparency" in prompt["key_number"]
    fixed = changed("explanation_evaluators", "authors_prompt_statements", lambda f: f.assign(asks_its_aspect=True))
    assert claims.record(claim("authors_prompt_statements"), fixed)["verdict"] == claim_evidence.REPRODUCED


def test_not_testable_says_which_of_no_capable_judge_and_too_few_answers_holds():
    need = claim_evidence.SampleNeed(12, 1940, "a gain", "Fisher z")
    text = claim_evidence.reason(Evidence(missing=claim_evidence.NEEDS_A_CAPABLE_LLM, sample=need))
    assert text.startswith("no capable judge") and "too few answers: 12 here, 1,940 needed" in text
    enough = claim_evidence.reason(Evidence(missing=claim_evidence.NEEDS_A_CAPABLE_LLM,
                                            sample=claim_evidence.SampleNeed(400, 175, "r", "z")))
    assert "enough answers: 400 here" in enough
    rq2 = claims.registry(load_table).set_index("claim").loc[claim("agreement_by_setting").claim]
    assert rq2["verdict"] == claim_evidence.NOT_TESTABLE and "too few answers" in rq2["reason"]
    assert 1930 <= rq2["n_needed"] <= 1950 and rq2["n"] < rq2["n_needed"]
    rq3 = claims.registry(load_table).set_index("claim").loc[claim("table5_ours").claim]
    assert "more than the 2,150 answers the dataset holds" in rq3["reason"]
    assert "dataset holds" not in rq2["reason"]


def test_a_constant_answer_decides_tokutakes_claims_by_the_papers_own_numbers():
    records = claims.registry(load_table).set_index("claim")
    best = records.loc[claim("metrics", "Chain-of-thought").claim]
    assert "errs more on its own g than answering 2" in best["key_number"]
    assert "0.633" in best["baselines"] and "62.5%" in best["baselines"]
    assert "failing" in best["reason"] and "answering 2" in best["reason"]


def test_a_judge_worth_less_than_one_more_label_reads_as_no_saving():
    trust = claims.registry(load_table).set_index("claim").loc[claims.ANSWERS["trust_judges"]]
    assert trust["verdict"] == claim_evidence.NOT_REPRODUCED and "no saving" in trust["key_number"]


@pytest.fixture
def plan_with_copies(tmp_path):
    """A run plan holding a student's copy of the surprise chapter (a copied notebook and the original's notebook
    under a new name), a demonstration run and a run of a notebook that copies no chapter."""
    from pathlib import Path

    from recjudge.compendium.runplan import load_runplan
    from recjudge.paths import project_root

    (tmp_path / "notebooks").mkdir()
    source = (Path(project_root()) / "notebooks" / "normalised_surprise.md").read_text(encoding="utf-8")
    (tmp_path / "notebooks" / "my_surprise.md").write_text(source, encoding="utf-8")
    (tmp_path / "notebooks" / "normalised_surprise.md").write_text(source, encoding="utf-8")
    (tmp_path / "notebooks" / "scratch.md").write_text(source.replace("import normalised_surprise as page",
                                                                      "import data_tour as page"), encoding="utf-8")
    datasets = "datasets: [movielens-latest-small, movielens-100k, movielens-1m]"
    (tmp_path / "runplan.yaml").write_text(f"""runs:
  - name: my_surprise
    notebook: notebooks/my_surprise.md
    parameters: {{DATASET: 100k}}
    {datasets}
  - name: surprise_again
    notebook: notebooks/normalised_surprise.md
    {datasets}
  - name: surprise_demo
    notebook: notebooks/normalised_surprise.md
    variant: synthetic
    {datasets}
  - name: scratch
    notebook: notebooks/scratch.md
    {datasets}
""", encoding="utf-8")
    return load_runplan(tmp_path / "runplan.yaml", root=tmp_path), tmp_path


def test_a_copied_chapter_reads_its_originals_claims_from_its_own_tables(plan_with_copies):
    runs, root = plan_with_copies
    assert claims.original_chapter("my_surprise", runs, root) == "normalised_surprise"
    assert claims.original_chapter("surprise_again", runs, root) == "normalised_surprise"
    read = []

    def copys_tables(chapter, table):  # the copy's own tables: here the original's numbers under the copy's name
        read.append(chapter)
        if chapter != "my_surprise":
            raise FileNotFoundError(f"results/{chapter}/{table}.csv does not exist")
        return load_table("normalised_surprise", table)

    box = claims.chapter_verdicts("my_surprise", copys_tables, runs=runs, root=root).data
    original = claims.chapter_verdicts("normalised_surprise", load_table).data
    assert set(read) == {"my_surprise"}
    assert "copy of {doc}`normalised_surprise`" in box and "results/my_surprise/" in box
    assert box.endswith(original)


def test_a_copy_whose_tables_are_missing_says_not_run_not_the_originals_verdict(plan_with_copies):
    runs, root = plan_with_copies

    def nothing(chapter, table):
        raise FileNotFoundError(f"results/{chapter}/{table}.csv does not exist")

    box = claims.chapter_verdicts("my_surprise", nothing, runs=runs, root=root).data
    assert claim_evidence.NOT_RUN in box and "results/my_surprise/ordering_check.csv" in box


def test_a_run_that_copies_no_chapter_says_plainly_it_has_no_verdict(plan_with_copies):
    runs, root = plan_with_copies
    assert claims.chapter_verdicts("scratch", load_table, runs=runs, root=root).data == claims.no_claims_note("scratch")
    assert "No verdict" in claims.no_claims_note("scratch")
    assert claims.chapter_verdicts("surprise_demo", load_table, runs=runs, root=root).data == ""


def test_a_copy_at_another_scale_whose_tables_lack_a_column_says_not_run_instead_of_failing(plan_with_copies):
    runs, root = plan_with_copies

    def other_scale(chapter, table):
        found = load_table("normalised_surprise", table)
        return found.drop(columns="holds_on_means") if table == "ordering_check" else found

    box = claims.chapter_verdicts("my_surprise", other_scale, runs=runs, root=root).data
    assert f"**{claim_evidence.NOT_RUN[0].upper()}{claim_evidence.NOT_RUN[1:]}:** *Normalised surprise orders" in box
    assert "holds_on_means" in box
