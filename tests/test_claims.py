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
#: A number measured on a sample whose interval crosses the claim's edge.
UNDECIDED = Check("undecided", 1.5, high=2.0, interval_at=claim_evidence.exact_interval(1.0, 2.5))


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
    (Evidence(paper_checks=(HOLDS, HOLDS)), claim_evidence.SUPPORTED),
    (Evidence(missing="a capable LLM", paper_checks=(HOLDS, HOLDS)), claim_evidence.SUPPORTED),
    (Evidence(missing="a capable LLM", paper_checks=(HOLDS, UNDECIDED)), claim_evidence.NOT_TESTABLE),
    (Evidence(missing="a capable LLM", paper_checks=(UNDECIDED, HOLDS), paper_quantifier=claim_evidence.SOME),
     claim_evidence.SUPPORTED),
    (Evidence(missing="a capable LLM", paper_checks=(FAILS, UNDECIDED), paper_quantifier=claim_evidence.SOME),
     claim_evidence.NOT_TESTABLE),
    (Evidence(missing="a capable LLM", paper_checks=(FAILS, FAILS), paper_quantifier=claim_evidence.SOME),
     claim_evidence.CONTRADICTED),
    (Evidence(checks=(UNDECIDED, UNDECIDED)), claim_evidence.NOT_TESTABLE),
    (Evidence(checks=(HOLDS, UNDECIDED)), claim_evidence.PARTLY),
    (Evidence(checks=(UNDECIDED, FAILS)), claim_evidence.NOT_REPRODUCED),
    (Evidence(checks=(UNDECIDED, HOLDS), quantifier=claim_evidence.SOME), claim_evidence.REPRODUCED),
    (Evidence(not_run="results/x/y.csv does not exist", checks=(HOLDS,)), claim_evidence.NOT_RUN),
])
def test_every_verdict_is_reachable_by_the_one_rule(evidence, expected):
    assert verdict(evidence) == expected


def test_the_rule_reaches_every_verdict_of_the_list():
    reached = {verdict(Evidence(checks=(HOLDS,))), verdict(Evidence(checks=(HOLDS, FAILS))),
               verdict(Evidence(checks=(FAILS,))), verdict(Evidence(paper_checks=(FAILS,), checks=(HOLDS,))),
               verdict(Evidence(paper_checks=(FAILS,), paper_text=True)),
               verdict(Evidence(checks=(HOLDS,), differences=(Difference("a", "b", "c", blocks=True),))),
               verdict(Evidence(missing="x")), verdict(Evidence(not_run="x")),
               verdict(Evidence(paper_checks=(HOLDS,))), verdict(Evidence(paper_checks=(HOLDS,), paper_text=True))}
    assert reached == set(claim_evidence.VERDICTS)


def test_the_same_test_says_yes_and_no():
    # One interval, one range: wholly inside holds, wholly outside fails, across the edge decides nothing.
    def gain(value: float, low: float, high: float) -> Check:
        return Check("gain", value, low=0.0, interval_at=claim_evidence.exact_interval(low, high))

    assert gain(0.05, 0.01, 0.09).state() == claim_evidence.HOLDS
    assert gain(-0.05, -0.09, -0.01).state() == claim_evidence.FAILS
    assert gain(0.02, -0.02, 0.06).state() == claim_evidence.UNDECIDED
    supported = Evidence(paper_checks=(gain(0.05, 0.01, 0.09),))
    contradicted = Evidence(paper_checks=(gain(-0.05, -0.09, -0.01),))
    assert (verdict(supported), verdict(contradicted)) == (claim_evidence.SUPPORTED, claim_evidence.CONTRADICTED)


def test_tiny_judges_never_decide_a_claim_about_capable_llm_judges():
    tiny = dict(checks=(FAILS, FAILS), judges=claim_evidence.TINY_JUDGES, about_capable_llms=True)
    assert verdict(Evidence(**tiny)) != claim_evidence.NOT_REPRODUCED
    assert verdict(Evidence(**tiny, missing="a capable LLM")) == claim_evidence.NOT_TESTABLE
    assert verdict(Evidence(**tiny, paper_checks=(HOLDS,))) == claim_evidence.SUPPORTED
    # a reader's judge, or a claim about tiny models themselves, is decided by its numbers
    assert verdict(Evidence(checks=(FAILS,), judges=claim_evidence.READER_JUDGES, about_capable_llms=True)) == \
        claim_evidence.NOT_REPRODUCED
    assert verdict(Evidence(checks=(FAILS,), judges=claim_evidence.TINY_JUDGES)) == claim_evidence.NOT_REPRODUCED


def test_simultaneous_intervals_widen_with_the_claims_checks():
    assert claim_evidence.simultaneous_level(1) == pytest.approx(0.95)
    assert claim_evidence.simultaneous_level(4) == pytest.approx(0.9875)


def normal_check(estimate: float, se: float, **claimed) -> Check:
    from scipy import stats

    return Check("normal", estimate, **claimed,
                 interval_at=lambda level: (estimate - stats.norm.ppf(0.5 + level / 2) * se,
                                            estimate + stats.norm.ppf(0.5 + level / 2) * se))


def test_every_case_holds_at_95_each_and_one_failing_case_needs_the_intervals_together():
    # z = 2.2 each: above 1.96, below the 2.50 of four intervals together
    clear = [normal_check(2.2, 1.0, low=0.0) for _ in range(4)]
    assert claim_evidence.decision(clear, claim_evidence.EVERY) == claim_evidence.HOLDS
    assert claim_evidence.decision(clear[:3] + [normal_check(-2.2, 1.0, low=0.0)]) == claim_evidence.UNDECIDED
    assert claim_evidence.decision(clear[:3] + [normal_check(-2.6, 1.0, low=0.0)]) == claim_evidence.FAILS
    # a claim about some case: one of four must hold with the four intervals together, every one fail at 95%
    assert claim_evidence.decision(clear, claim_evidence.SOME) == claim_evidence.UNDECIDED
    assert claim_evidence.decision([normal_check(2.6, 1.0, low=0.0)] + clear[:3], claim_evidence.SOME) == \
        claim_evidence.HOLDS
    assert claim_evidence.decision([normal_check(-2.2, 1.0, low=0.0)] * 4, claim_evidence.SOME) == \
        claim_evidence.FAILS


def test_a_record_with_nothing_to_decide_it_is_an_error_not_a_verdict():
    with pytest.raises(ValueError, match="needs checks"):
        verdict(Evidence(ours="some words"))


def test_a_nan_never_holds_nor_fails():
    assert Check("nan", math.nan, high=1.0).state() == claim_evidence.UNDECIDED
    nan_interval = Check("nan interval", 0.5, high=1.0, interval_at=claim_evidence.exact_interval(math.nan, math.nan))
    assert nan_interval.state() == claim_evidence.UNDECIDED


def test_the_reason_names_what_is_missing_what_blocks_and_what_fails():
    assert claim_evidence.reason(Evidence(missing="a capable LLM")) == "needs a capable LLM"
    blocking = Difference("tuning budget", "3 trials", "100 trials", blocks=True)
    assert claim_evidence.reason(Evidence(checks=(HOLDS,), differences=(blocking,))) == \
        "tuning budget: 3 trials here, 100 trials in the paper"
    assert claim_evidence.reason(Evidence(paper_checks=(HOLDS, FAILS))) == "1 of 2 of its checks hold (failing: fails)"


@pytest.mark.parametrize("evidence", [Evidence(paper_checks=(HOLDS, FAILS)), Evidence(paper_checks=(HOLDS,)),
                                      Evidence(paper_checks=(HOLDS, FAILS), paper_text=True),
                                      Evidence(paper_checks=(HOLDS,), paper_text=True)],
                         ids=["contradicted", "supported", "contradicted by text", "supported by text"])
def test_a_verdict_that_names_its_source_is_not_followed_by_it_again(evidence):
    # "contradicted by the paper's own numbers: the paper's own numbers: 28 of 38 hold" said it twice
    shown = f"{verdict(evidence)}: {claim_evidence.reason(evidence)}"
    source = "the authors' own text" if evidence.paper_text else "the paper's own numbers"
    assert shown.count(source) == 1, shown
    assert re.search(r"\d+ of \d+ of its checks hold", shown)


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
    # Kang et al.'s own Table 2 at its n: GPT-4's lead over SOG on Taobao is clear, the other three cells' intervals
    # hold 0, and no gain's interval is narrow enough to say "about 100%"; 10 of 38 correlations are not significant
    assert found[claim("paper_claim_gain_over_sog", "LLMs such as").claim] == claim_evidence.NOT_TESTABLE
    assert found[claim("paper_claim_gain_over_sog", "The LLMs' gain").claim] == claim_evidence.NOT_TESTABLE
    assert found[claim("paper_claim_significance").claim] == claim_evidence.CONTRADICTED
    # Kang et al.'s Table 5: auxiliary data's gain is clear on both datasets, averaging's on neither
    assert found[claim("agreement_by_setting").claim] == claim_evidence.SUPPORTED
    assert found[claim("table5_ours").claim] == claim_evidence.NOT_TESTABLE
    # Zhang et al.'s Table 1: GPT4 (M) is clearly above ROUGE-1-F; no GPT-4 row is clearly above the annotators
    assert found[claim("llm_runs").claim] == claim_evidence.SUPPORTED
    assert found[claim("table1_agreement_by_row", "GPT-4 evaluates").claim] == claim_evidence.NOT_TESTABLE
    # ML-1M's order: 0-8 TPE trials per fold against the paper's 100
    assert found[claim("order_vs_paper_1m").claim] == claim_evidence.NOT_COMPARABLE
    # DESR's Pearson (-2.3%) is below Random's
    assert found[claim("agreement_all_answers", "Every proxy metric").claim] == claim_evidence.PARTLY
    # its Table 3 judge (GPT-4o-mini, CoT) errs more on g than answering 2 every time (its Table 1)
    assert found[claim("paper_claim_avg_score_vs_g").claim] == claim_evidence.CONTRADICTED
    # CoT's MAE is the lowest of the four prompts for both LLMs even at the widest spread the errors can have, but a
    # constant answer errs less than it, so an MAE below 1 shows nothing about telling items apart
    assert found[claim("metrics", "Chain-of-thought").claim] == claim_evidence.SUPPORTED
    assert found[claim("metrics", "An MAE below 1.0").claim] == claim_evidence.CONTRADICTED
    assert found[claim("ordering_check").claim] == claim_evidence.REPRODUCED


def test_the_same_test_on_the_papers_own_numbers_supports_or_contradicts_the_lead_over_sog():
    lead = claim("paper_claim_gain_over_sog", "LLMs such as")
    assert (claims.record(lead)["paper_checks_holding"], claims.record(lead)["paper_checks_total"]) == (1, 4)
    # every LLM far above SOG at the paper's n: supported; one far below it: contradicted
    above = changed("proxy_vs_llm", "paper_claim_gain_over_sog",
                    lambda f: f.assign(pearson_pct=f["sog_pearson_pct"] + 15))
    below = changed("proxy_vs_llm", "paper_claim_gain_over_sog",
                    lambda f: f.assign(pearson_pct=f["pearson_pct"].where(f.index != f.index[0], -15.0)))
    assert claims.record(lead, above)["verdict"] == claim_evidence.SUPPORTED
    assert claims.record(lead, below)["verdict"] == claim_evidence.CONTRADICTED
    # twice SOG on Taobao's 11,383 answers, with correlations of 60% and 30%: "about 100%" holds
    doubled = changed("proxy_vs_llm", "paper_claim_gain_over_sog", lambda f: f.assign(
        pearson_pct=60.0, sog_pearson_pct=30.0, dataset="Taobao Serendipity"))
    assert claims.record(claim("paper_claim_gain_over_sog", "The LLMs' gain"), doubled)["verdict"] == \
        claim_evidence.SUPPORTED


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
        pearson_pct=f["pearson_pct"].where(f["method"] != "DESR", 8.0),
        pearson_ci_low=f["pearson_ci_low"].where(f["method"] != "DESR", 3.0),
        pearson_ci_high=f["pearson_ci_high"].where(f["method"] != "DESR", 12.0)))
    assert claims.record(proxies, desr_up)["verdict"] == claim_evidence.REPRODUCED


def test_a_proxy_whose_interval_holds_random_is_not_called_below_it():
    # "DESR (−2.3%) correlates with users below Random's 0.0%" hid that its interval [−6.4, 2.0] holds 0
    proxies = claim("agreement_all_answers", "Every proxy metric")
    desr = pd.DataFrame({"method": ["Random", "SOG", "SNPR", "PURS", "DESR"], "pearson_pct": [0.0, 9.3, 4.9, 6.4, -2.3],
                         "pearson_ci_low": [-4.3, 4.2, 0.2, 1.6, -6.4], "pearson_ci_high": [4.4, 14.2, 9.4, 11.0, 2.0],
                         "n": 2130, "seeds": 1000})
    found = claims.record(proxies, lambda chapter, table: desr if table == "agreement_all_answers"
                          else load_table(chapter, table))
    assert "DESR (−2.3% [−6.4, 2.0]) cannot be told from Random" in found["key_number"]
    assert "below" not in found["key_number"]
    assert found["verdict"] == claim_evidence.PARTLY and "1 undecided" in found["reason"]
    below = desr.assign(pearson_ci_high=desr["pearson_ci_high"].where(desr["method"] != "DESR", -0.5))
    assert "DESR (−2.3% [−6.4, −0.5]) correlates below it" in claims.record(
        proxies, lambda chapter, table: below if table == "agreement_all_answers" else load_table(chapter, table)
    )["key_number"]


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
    assert text.count("\n| **") == len(claims.CLAIMS)
    assert text.startswith(f"```{{table}}\n:class: {claims.MATRIX_CLASS}\n") and text.endswith("\n```")


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
    from recjudge.compendium.comparisons import ZHANG_ASPECTS

    you, asks = reader.display_label, f"{reader.provider}:{reader.model}"

    def load(chapter: str, table: str) -> pd.DataFrame:
        frame = load_table(chapter, table)
        if (chapter, table) == ("prompt_strategies", "metrics"):
            frame = pd.concat([frame, frame.assign(judge=you, mae=0.1, n=30, n_unparsable=0)], ignore_index=True)
        if (chapter, table) == ("prompt_strategies", "judge_runs"):
            frame = pd.concat([frame, frame.assign(judge=you, items=20, unparsable=[1, 0, 2, 0])], ignore_index=True)
        if (chapter, table) == ("explanation_evaluators", "llm_runs"):
            frame = pd.concat([frame, frame.assign(model=asks, n_replies=10, n_unparsable=0)], ignore_index=True)
        if (chapter, table) == ("explanation_evaluators", "readers_versus_reference") and frame.empty:
            # the rows a variant writes for its reader's evaluator beside ROUGE-1-F on the same texts
            frame = pd.DataFrame({"evaluator": f"{you} (M, zero-shot)", "aspect": list(ZHANG_ASPECTS),
                                  "reference": "ROUGE-1-F", "n": 40, "pearson": 0.2, "reference_pearson": 0.1,
                                  "r_with_reference": 0.3})
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
        assert bullet.endswith(f"Evidence: {{doc}}`notebooks/{by_claim.loc[finding[0], 'chapter']}`.")
    assert "10 of its 38 correlations are not significant" in bullets[0]
    assert "r = 0.09 [0.04, 0.14]" in bullets[0] and "2,130 answers" in bullets[0], "a correlation as r"


def test_a_changed_number_changes_the_landing_finding():
    # one of Lima & Peres's 26 inequalities no longer holding on the means: the order is reproduced only partly
    flipped = changed("normalised_surprise", "ordering_check",
                      lambda f: f.assign(mean_difference=f["mean_difference"].where(f.index != f.index[0], -1.0)))
    surprise = claims.landing_markdown(claims.registry(flipped)).splitlines()[-1]
    partly = claim_evidence.PARTLY
    assert surprise.startswith(f"- **{partly[0].upper()}{partly[1:]}:** normalised surprise orders")


def test_a_landing_finding_the_registry_lacks_is_an_error():
    records = claims.registry(load_table)
    with pytest.raises(KeyError, match="no claim 'Normalised surprise orders"):
        claims.landing_markdown(records[~records["claim"].str.startswith("Normalised surprise orders")])


def test_the_papers_pooled_rows_decide_the_labels_claim_and_the_authors_prompt_skips_transparency():
    found = claims.registry(load_table).set_index("claim")
    trust = found.loc["An LLM judge's scores save human labels"]
    # no judge here saves a label (the tiny ones are context), but the papers' pooled correlations do
    assert trust["verdict"] == claim_evidence.SUPPORTED and trust["checks_holding"] == 0 and trust["n"] == 100
    assert trust["paper_checks_holding"] >= 1
    prompt = found.loc["The LLM is asked about each aspect with the users' questionnaire statement"]
    assert prompt["verdict"] == claim_evidence.CONTRADICTED_BY_TEXT, "a prompt is text, not the paper's numbers"
    assert prompt["reason"].startswith("3 of 4 of its checks hold")
    assert (prompt["paper_checks_holding"], prompt["paper_checks_total"]) == (3, 4)
    assert "never asks about transparency" in prompt["key_number"]
    fixed = changed("explanation_evaluators", "authors_prompt_statements", lambda f: f.assign(asks_its_aspect=True))
    assert claims.record(claim("authors_prompt_statements"), fixed)["verdict"] == claim_evidence.SUPPORTED_BY_TEXT


def test_not_testable_says_which_of_no_capable_judge_and_too_few_answers_holds():
    need = claim_evidence.SampleNeed(12, 1940, "a gain", "Fisher z")
    text = claim_evidence.reason(Evidence(missing=claim_evidence.NEEDS_A_CAPABLE_LLM, sample=need))
    assert text.startswith("no capable judge") and "too few answers: 12 here, 1,940 needed" in text
    enough = claim_evidence.reason(Evidence(missing=claim_evidence.NEEDS_A_CAPABLE_LLM,
                                            sample=claim_evidence.SampleNeed(400, 175, "r", "z")))
    assert "enough answers: 400 here" in enough
    rq3 = claims.registry(load_table).set_index("claim").loc[claim("table5_ours").claim]
    assert rq3["verdict"] == claim_evidence.NOT_TESTABLE and "too few answers" in rq3["reason"]
    assert "more than the 2,150 answers the dataset holds" in rq3["reason"]
    # a comparison on the same answers at r12 = 0 needs as many answers as two independent samples hold in all
    rq2 = claims.registry(load_table).set_index("claim").loc[claim("agreement_by_setting").claim]
    assert 1900 <= rq2["n_needed"] <= 2000


def test_a_constant_answer_decides_tokutakes_claims_by_the_papers_own_numbers():
    records = claims.registry(load_table).set_index("claim")
    best = records.loc[claim("metrics", "An MAE below 1.0").claim]
    assert "errs more on its own g than answering 2" in best["key_number"]
    assert "0.633" in best["baselines"] and "62.5%" in best["baselines"]
    assert "failing" in best["reason"] and "answering 2" in best["reason"]


def test_the_tiny_judges_never_decide_the_labels_claim():
    # without the papers' rows, the tiny judges' lack of savings leaves the claim to the recorded gpt-3.5-turbo
    import dataclasses

    trust = claim("labels_worth")
    evidence = dataclasses.replace(trust.read(load_table), paper_checks=(), about_capable_llms=True)
    assert [check.name for check in claim_evidence.deciding_checks(evidence)] == ["gpt-3.5-turbo (recorded)"]
    tiny_only = dataclasses.replace(evidence, checks=claim_evidence.deciding_checks(evidence) and tuple(
        check for check in evidence.checks if check.by == claim_evidence.TINY_JUDGES))
    assert verdict(tiny_only) == claim_evidence.NOT_TESTABLE


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


# ---------------------------------------------------------------------------- the rule read by planted judges

def test_two_identical_evaluators_are_not_one_better_than_the_other():
    """A judge whose scores in two prompts are the same answers: their correlations differ by exactly 0 with a
    zero-width interval, which held the claim that one agrees better (planted null judges were "reproduced"); equal
    is not better, so the comparison fails."""
    from recjudge.compendium.comparisons import contrast_check

    same = contrast_check("with − without", 12.0, 12.0, 200, r_ab=1.0)
    assert same.state() == claim_evidence.FAILS
    assert contrast_check("with − without", 30.0, 12.0, 2000, r_ab=0.5).state() == claim_evidence.HOLDS


def readers_rows(label: str, rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{"judge": label, **row} for row in rows])


def test_a_readers_comparison_on_fewer_answers_than_the_books_minimum_decides_nothing():
    """Two items judged with every prompt: the MAE gaps' standard deviation of 0 gave intervals of zero width, and
    a planted judge with no difference between prompts was "reproduced" one seed in four."""
    from recjudge.compendium.comparisons import reader_gaps_to_cot

    metrics = readers_rows("mine", [{"template": t, "mae_gap": 0.5, "mae_gap_sd": 0.0, "n_paired": 2}
                                    for t in ("Base", "LS", "LtM")] + [{"template": "CoT", "mae_gap": 0.0,
                                                                        "mae_gap_sd": 0.0, "n_paired": 2}])
    assert [c.state() for c in reader_gaps_to_cot(metrics, ["mine"])] == [claim_evidence.UNDECIDED] * 3


def test_a_readers_mae_gap_reads_students_t_for_its_estimated_spread():
    from scipy import stats

    from recjudge.compendium.comparisons import reader_gaps_to_cot

    metrics = readers_rows("mine", [{"template": "Base", "mae_gap": 0.3, "mae_gap_sd": 0.5, "n_paired": 12}])
    low, high = reader_gaps_to_cot(metrics, ["mine"])[0].interval
    assert (high - low) / 2 == pytest.approx(stats.t.ppf(0.975, 11) * 0.5 / math.sqrt(12))


def test_a_readers_judge_saves_labels_only_when_its_correlations_interval_says_so():
    """The labels a reader's judge saves were read as an exact number: a judge correlating 0.12 with the users on 300
    answers (a population whose ρ may well be below the 0.0995 that saves one label per 100) was said to save labels
    (planted null judges at the default profile: 6 seeds in 20)."""
    from recjudge.compendium import claim_readers

    worth = load_table("trust_judges", "labels_worth")
    judges = load_table("trust_judges", "judges")
    row = worth[(worth["estimand"] == "mean serendipity") & (worth["n"] == 100)].iloc[0].copy()
    row.update({"judge": "mine few-shot (5)", "population": 300, "pearson": 0.12, "labels_worth": 101.6,
                "labels_worth_mc_low": 101.3, "labels_worth_mc_high": 101.9, "labels_worth_by_rho2": 101.45})
    tables = {("trust_judges", "labels_worth"): pd.concat([worth, row.to_frame().T], ignore_index=True),
              ("trust_judges", "judges"): pd.concat([judges, pd.DataFrame([{"judge": "mine few-shot (5)",
                                                                             "kind": "reader's LLM"}])],
                                                    ignore_index=True)}
    evidence = claim_readers._labels_saved(lambda c, t: tables.get((c, t), load_table(c, t)), ["mine"])
    mine = next(c for c in evidence.checks if c.name.startswith("mine"))
    assert mine.state() == claim_evidence.UNDECIDED and mine.interval[0] < 1 < mine.interval[1]


def test_a_history_length_is_no_auxiliary_data_for_the_readers_claim():
    """The auxiliary-data claim read a reader's shorter histories (k=1, ...) as settings with auxiliary data: the
    chapter's own choice of the best setting says a history length is not a datum."""
    mine = pd.DataFrame([{"method": method, "judge": "mine", "n": 2000, "pearson_pct": pearson,
                          "versus": "none (NA)", "n_with_versus": 2000, "r_with_versus": r}
                         for method, pearson, r in (("none (NA)", 10.0, 1.0), ("Pop", 10.5, 0.9),
                                                    ("k=1", 20.0, 0.5))])
    load = changed("auxiliary_data", "agreement_by_setting",
                   lambda frame: pd.concat([frame, mine], ignore_index=True))
    evidence = claim("agreement_by_setting").evidence(load, readers=["mine"])
    assert [c.name for c in evidence.checks] == ["mine: Pop − none (NA)"]
    assert verdict(evidence) != claim_evidence.REPRODUCED
