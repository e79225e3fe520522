"""The claims registry: every claim of the five papers that a chapter examines (:data:`CLAIMS`), its record in a
build, and how the records are shown (a chapter's verdict box, the landing page's findings, the claims matrix).

A claim (:class:`Claim`) names the paper, its section, the claim in the paper's words, the chapter that examines it
and the result table its numbers come from. Its reader (:mod:`recjudge.compendium.claim_readers`) turns the build's
tables into evidence, and the one rule (:mod:`recjudge.compendium.claim_evidence`) turns the evidence into a verdict:
no page types a verdict word. A table the build did not write makes the claim "not run in this build", naming the
table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
from IPython.display import Markdown

from recjudge.compendium import claim_evidence
from recjudge.compendium.claim_evidence import (
    NEEDS_A_CAPABLE_LLM,
    NEEDS_A_CAPABLE_LLM_BESIDE_YOURS,
    NOT_COMPARABLE,
    NOT_RUN,
    NOT_TESTABLE,
    Evidence,
    Loader,
    reason,
    verdict,
)

# Each claim's reader is private to the registry: only CLAIMS below names it.
from recjudge.compendium.claim_readers import (
    BOOK_JUDGE,
    _accuracy_order,
    _authors_prompt_aspects,
    _auxiliary_data,
    _avg_score_vs_g,
    _certain_llms_vs_metrics,
    _coefficients_of_variation,
    _cot_lowest_mae,
    _ensembles,
    _g_distribution,
    _gain_about_100,
    _labels_saved,
    _llms_beat_sog,
    _llms_vs_annotators,
    _mae_below_one_shows_serendipity,
    _magnitudes,
    _metamorphic_lists,
    _proxies_beat_random,
    _proxies_weak,
    _serendipity_ranking,
    _surprise_order,
    _table2_significant,
    _zhang_rows,
)
from recjudge.compendium.pages import fmt
from recjudge.compendium.results import in_variant, load_table, results_path
from recjudge.llm.judge_spec import JudgeSpec

#: Whose numbers a claim reads (``Claim.numbers_of``).
BOOK_JUDGE_NUMBERS = f"{BOOK_JUDGE}'s (the book's own judge)"
POOL_NUMBERS = "the pool of LLM judges' (the book's and, where it joins the pool, yours)"
NO_JUDGE_NUMBERS = ""


@dataclass(frozen=True)
class Claim:
    """A claim of a paper that a chapter examines; ``read`` turns a build's tables into its evidence. ``finding``
    names the at-a-glance row (paper and question) it belongs to; ``numbers_of`` whose LLM judge's numbers it reads
    (``NO_JUDGE_NUMBERS``: none, e.g. proxies or the paper's own numbers)."""

    paper: str
    section: str
    claim: str
    finding: str
    chapter: str
    table: str
    read: Callable[[Loader, Sequence[str]], Evidence] = field(repr=False)
    numbers_of: str = NO_JUDGE_NUMBERS
    #: The claim is about what capable LLM judges do: the book's tiny local judges never decide it.
    about_capable_llms: bool = False
    #: The paper's own words or printed numbers in the section the claim names ("" where the claim is not the
    #: paper's text: the authors' code, this book's own question); a test finds them there in the paper's text.
    quote: str = ""

    def evidence(self, load: Loader, *, strict: bool = True, readers: Sequence[str] = ()) -> Evidence:
        """The claim's evidence in a build; a table the build did not write makes it "not run". ``strict=False``
        (a variant's chapter, whose tables may hold other rows at another scale): a row the tables lack makes it
        "not run" too, naming the row, instead of an error. ``readers``: the labels of a reader's judges whose rows
        the tables hold (a variant), which a claim about LLM judges reads as its evidence."""
        try:
            return replace(self.read(load, readers), about_capable_llms=self.about_capable_llms)
        except FileNotFoundError as missing:
            return Evidence(not_run=str(missing))
        except KeyError as lacking:
            if strict:
                raise
            return Evidence(not_run=str(lacking).strip("'\""))


RECORD_COLUMNS = ["paper", "section", "claim", "verdict", "reason", "paper_numbers", "ours", "key_number", "n",
                  "ci_low",
                  "ci_high", "checks_holding", "checks_total", "paper_checks_holding", "paper_checks_total",
                  "differences", "finding", "chapter", "table", "baselines", "n_needed", "about_capable_llms"]


def record(claim: Claim, load: Loader = load_table, *, strict: bool = True, readers: Sequence[str] = ()
           ) -> dict[str, object]:
    """The claim's row of the registry (columns ``RECORD_COLUMNS``; ``strict`` and ``readers``: see
    :meth:`Claim.evidence`)."""
    evidence = claim.evidence(load, strict=strict, readers=readers)
    low, high = evidence.interval or (math.nan, math.nan)
    return {"paper": claim.paper, "section": claim.section, "claim": claim.claim, "verdict": verdict(evidence),
            "reason": reason(evidence), "paper_numbers": evidence.paper_numbers, "ours": evidence.ours,
            "key_number": evidence.key or evidence.ours, "n": evidence.n, "ci_low": low, "ci_high": high,
            "checks_holding": sum(check.holds() for check in evidence.checks), "checks_total": len(evidence.checks),
            "paper_checks_holding": sum(check.holds() for check in evidence.paper_checks),
            "paper_checks_total": len(evidence.paper_checks),
            "differences": "; ".join(str(d) for d in evidence.differences), "finding": claim.finding,
            "chapter": claim.chapter, "table": claim.table, "baselines": evidence.baselines,
            "n_needed": evidence.sample.n_needed if evidence.sample else None,
            "about_capable_llms": claim.about_capable_llms}


def registry(load: Loader = load_table, claims: Sequence[Claim] | None = None, *, strict: bool = True,
             readers: Sequence[str] = ()) -> pd.DataFrame:
    """Every claim's record in this build, one row each (columns ``RECORD_COLUMNS``); ``n`` is a count (nullable);
    ``readers``: the labels of a reader's judges whose rows the tables hold."""
    frame = pd.DataFrame([record(claim, load, strict=strict, readers=readers)
                          for claim in (CLAIMS if claims is None else claims)], columns=RECORD_COLUMNS)
    return frame.astype({"n": "Int64", "n_needed": "Int64"})



KANG, TOKUTAKE, ZHANG, LIMA, KHIRBAT = ("Kang et al. 2025", "Tokutake et al. 2025", "Zhang et al. 2024",
                                        "Lima & Peres", "Khirbat et al. 2024")
KANG_RQ1, KANG_RQ23 = "Kang et al. 2025, RQ1", "Kang et al. 2025, RQ2–RQ3"
TOKUTAKE_REEVAL = "Tokutake et al. 2025, re-evaluation"
#: The trust part asks a question of this book's own, not a paper's; its claim is the hope behind all five papers.
THIS_BOOK, TRUST = "This book", "Beyond the papers: part V"

CLAIMS = (
    Claim(KANG, "Table 2", "The proxy metrics agree only weakly with users' serendipity ratings", KANG_RQ1,
          "proxy_vs_llm", "agreement_all_answers", _proxies_weak, quote="SOG 4.6095 1.5231 1.8736 5.7226"),
    Claim(KANG, "section 3.1", "Every proxy metric agrees with users better than random", KANG_RQ1,
          "proxy_vs_llm", "agreement_all_answers", _proxies_beat_random,
          quote="proxy metrics surpass random baselines"),
    Claim(KANG, "section 2.5", "Every Pearson correlation of Table 2 is significant at p < 0.05", KANG_RQ1,
          "proxy_vs_llm", "paper_claim_significance", _table2_significant,
          quote="all reported Pearson correlation coefficients are statistically significant at the p < 0.05 level"),
    Claim(KANG, "section 3.2", "LLMs such as Qwen2.5-14B and GPT-4 correlate with users better than the best proxy "
          "(SOG) on both datasets", KANG_RQ1, "proxy_vs_llm", "paper_claim_gain_over_sog", _llms_beat_sog,
          about_capable_llms=True,
          quote="LLMs such as Qwen2.5-14B and GPT-4 surpass conventional metrics across both datasets"),
    Claim(KANG, "section 3.2", "The LLMs' gain over SOG is about 100% in Pearson", KANG_RQ1, "proxy_vs_llm",
          "paper_claim_gain_over_sog", _gain_about_100, about_capable_llms=True,
          quote="by approximately 100% in Pearson correlation compared to the best proxy metric (SOG)"),
    Claim(KANG, "RQ2, Table 5", "Auxiliary data in the prompt makes the judge agree better with users",
          KANG_RQ23, "auxiliary_data", "agreement_by_setting", _auxiliary_data, BOOK_JUDGE_NUMBERS,
          about_capable_llms=True, quote="Auxiliary Data 18.2535"),
    Claim(KANG, "RQ3, Table 5", "Averaging several LLM judges agrees better with users than one", KANG_RQ23,
          "llm_ensembles", "table5_ours", _ensembles, POOL_NUMBERS, about_capable_llms=True,
          quote="Multi-LLM & Auxiliary Data 20.2293"),
    Claim(TOKUTAKE, "section 4.1", "The ground truth g has the printed distribution", TOKUTAKE,
          "prompt_strategies", "ground_truth_search", _g_distribution,
          quote="1 (321), 2 (1,022), 3 (586), 4 (208), and 5 (13)"),
    Claim(TOKUTAKE, "section 4.2, Table 1", "Chain-of-thought gives the lowest MAE of the four prompts, for both "
          "LLMs", TOKUTAKE, "prompt_strategies", "metrics", _cot_lowest_mae, BOOK_JUDGE_NUMBERS,
          about_capable_llms=True, quote="CoT achieved the best results across the LLM and the metrics"),
    Claim(TOKUTAKE, "section 4.2", "An MAE below 1.0 shows that the CoT judge tells serendipitous items from the rest",
          TOKUTAKE, "prompt_strategies", "metrics", _mae_below_one_shows_serendipity,
          quote="the CoT achieved an MAE below 1.0, indicating that the system can effectively distinguish between "
                "serendipitous"),
    Claim(TOKUTAKE, "Table 3", "The six recommenders rank by accuracy on ML-1M as printed", TOKUTAKE_REEVAL,
          "recommender_reevaluation", "order_vs_paper_1m", _accuracy_order, quote="<b>8.28</b> <b>11.8</b>"),
    Claim(TOKUTAKE, "Table 3", "An LLM judge ranks the recommenders' serendipity as printed", TOKUTAKE_REEVAL,
          "recommender_reevaluation", "table3_latest-small", _serendipity_ranking, BOOK_JUDGE_NUMBERS,
          about_capable_llms=True, quote="<b>2.387</b>"),
    Claim(TOKUTAKE, "section 5.2, finding (3)", "An Avg. Score@20 of 2.1–2.4 aligns with g, so the judge reflects "
          "real users' serendipity", TOKUTAKE_REEVAL, "recommender_reevaluation", "paper_claim_avg_score_vs_g",
          _avg_score_vs_g, BOOK_JUDGE_NUMBERS,
          quote="the Avg. Score remained in the 2.1–2.4 range. This aligns with the ground truth"),
    Claim(ZHANG, "Table 1", "The annotator rows", ZHANG, "explanation_evaluators", "table1_agreement_by_row",
          _zhang_rows(("Annotator-1", "Annotator-2", "Average")), quote="Annotator-1 19.88 / 18.31 / 16.72"),
    Claim(ZHANG, "Table 1", "The BLEU and ROUGE rows", ZHANG, "explanation_evaluators", "table1_agreement_by_row",
          _zhang_rows(("BLEU-1", "BLEU-4", "ROUGE-1-F", "ROUGE-L-F")), quote="ROUGE-L-F 14.16 / 16.39 / 17.56"),
    Claim(ZHANG, "section 1, finding (1); section 3",
          "Certain LLMs evaluate explanations as well as or better than BLEU and ROUGE", ZHANG,
          "explanation_evaluators", "llm_runs", _certain_llms_vs_metrics, BOOK_JUDGE_NUMBERS, about_capable_llms=True,
          quote="Certain zero-shot LLMs, such as GPT4, can attain evaluation accuracy comparable to or better than "
                "traditional methods"),
    Claim(ZHANG, "section 3", "GPT-4 evaluates explanations better than the third-party annotators, on average over "
          "the aspects", ZHANG, "explanation_evaluators", "table1_agreement_by_row", _llms_vs_annotators,
          about_capable_llms=True,
          quote="In average performance of different aspects, GPT-4 surpasses both third-party annotators"),
    Claim(ZHANG, "the authors' prompt", "The LLM is asked about each aspect with the users' questionnaire statement",
          ZHANG, "explanation_evaluators", "authors_prompt_statements", _authors_prompt_aspects),
    Claim(LIMA, "section 4.2, Table 2", "Normalised surprise orders MSI ≥ kNN ≥ LSI", LIMA, "normalised_surprise",
          "ordering_check", _surprise_order,
          quote="under MSI were consistently higher than those under kNN … under LSI were consistently lower than "
                "those under kNN"),
    Claim(LIMA, "Table 2", "The magnitudes of normalised surprise on MovieLens-1M with movie descriptions", LIMA,
          "normalised_surprise", "table2_vs_paper", _magnitudes, quote="0.912 0.910 0.031"),
    Claim(LIMA, "Discussion", "The choice of item model and distance has a non-negligible effect (coefficients of "
          "variation 13.6%, 29.9%, 13.8%, 20.7%)", LIMA, "normalised_surprise",
          "paper_claim_coefficients_of_variation", _coefficients_of_variation,
          quote="such choices have a non-negligible effect … is 13.6% with cosine distance, and 29.9% with Euclidean "
                "distance. In addition, the coefficient of variation under kNN for Model U is 13.8%, and for Model C "
                "is 20.7%"),
    Claim(KHIRBAT, "Tables 2–4", "An LLM recommender's lists move under semantics-preserving prompt changes",
          KHIRBAT, "metamorphic_recommender", "reply_parsing", _metamorphic_lists, BOOK_JUDGE_NUMBERS,
          about_capable_llms=True, quote="MR1: Multiply 0.4829(0.0082)"),
    Claim(THIS_BOOK, "part V", "An LLM judge's scores save human labels", TRUST, "trust_judges", "labels_worth",
          _labels_saved, POOL_NUMBERS, about_capable_llms=True),
)


def for_chapter(chapter: str, load: Loader = load_table, *, strict: bool = True) -> pd.DataFrame:
    """The registry's records of the claims one chapter examines."""
    return registry(load, [claim for claim in CLAIMS if claim.chapter == chapter], strict=strict)


#: Per chapter, the claim whose verdict answers the chapter's question: its verdict box opens with it.
ANSWERS = {
    "proxy_vs_llm": "LLMs such as Qwen2.5-14B and GPT-4 correlate with users better than the best proxy (SOG) on both "
                    "datasets",
    "auxiliary_data": "Auxiliary data in the prompt makes the judge agree better with users",
    "llm_ensembles": "Averaging several LLM judges agrees better with users than one",
    "prompt_strategies": "Chain-of-thought gives the lowest MAE of the four prompts, for both LLMs",
    "recommender_reevaluation": "An LLM judge ranks the recommenders' serendipity as printed",
    "explanation_evaluators": "Certain LLMs evaluate explanations as well as or better than BLEU and ROUGE",
    "normalised_surprise": "Normalised surprise orders MSI ≥ kNN ≥ LSI",
    "metamorphic_recommender": "An LLM recommender's lists move under semantics-preserving prompt changes",
    "trust_judges": "An LLM judge's scores save human labels",
}
#: A chapter's verdict box holds its answer and at most this many bullets.
MAX_VERDICT_BULLETS = 4
#: Verdicts whose reason (what is missing, what blocks the comparison) a reader needs beside the number.
_REASON_NEEDED = (NOT_TESTABLE, NOT_COMPARABLE, NOT_RUN)


def _why(row: object) -> str:
    """A claim's number in plain words, and, where the verdict rests on it, what is missing or blocks."""
    parts = [row.key_number] if row.key_number else []
    if row.verdict in _REASON_NEEDED and row.reason:
        parts.append(row.reason)
    return "; ".join(parts)


def verdict_bullets(records: pd.DataFrame) -> list[str]:
    """One bullet per claim: the claim, its verdict in bold and the number behind it (for a chapter's verdict
    box)."""
    return [f"*{row.claim}* ({row.paper}, {row.section}): **{row.verdict}**" + (f"; {_why(row)}." if _why(row)
                                                                                 else ".")
            for row in records.itertuples(index=False)]


def answer_line(row: object) -> str:
    """The verdict box's first line: the verdict of the claim that answers the chapter's question, then the claim
    and its number."""
    why = _why(row)
    return (f"**{row.verdict[0].upper()}{row.verdict[1:]}:** *{row.claim}* ({row.paper}, {row.section})"
            + (f"; {why}." if why else "."))


@dataclass(frozen=True)
class ReplyCount:
    """Where a chapter counts a judge's replies: ``table`` has one row per run, the judge named in ``column`` (by
    ``name(judge)``; ``prefix``: the name starts the cell), with ``replies`` and ``unusable`` (unparsable, or for a
    recommender not a list of titles) counts; ``once``: rows repeating a run (another reading of the same replies)
    are counted once."""

    table: str
    column: str
    name: Callable[[JudgeSpec], str]
    replies: str
    unusable: str
    prefix: bool = False
    once: bool = False
    what: str = "unparsable"

    def counts(self, chapter: str, load: Loader, judge: JudgeSpec) -> tuple[int, int]:
        """(unusable replies, replies) of ``judge``; KeyError when the table has no run of it."""
        table = load(chapter, self.table)
        cells = table[self.column].astype(str)
        mine = table[cells.str.startswith(self.name(judge)) if self.prefix else cells == self.name(judge)]
        if self.once:
            mine = mine.drop_duplicates(self.column)
        if mine.empty:
            raise KeyError(f"{chapter}/{self.table}: no run of {judge.display_label}")
        return int(mine[self.unusable].sum()), int(mine[self.replies].sum())


def asks_as(judge: JudgeSpec) -> str:
    """How the chapters' run tables name a judge's requests: ``<provider>:<model>`` (``JudgeConfig.label``'s head)."""
    return f"{judge.provider}:{judge.model}"


#: Per chapter, where its tables count a reader's judge's replies (the runs' reports).
REPLY_COUNTS = {
    "proxy_vs_llm": ReplyCount("judge_runs", "judge", lambda judge: f"{asks_as(judge)}/", "prompts", "unparsable",
                               prefix=True, once=True),
    "auxiliary_data": ReplyCount("judge_runs", "judge", lambda judge: judge.display_label, "prompts", "unparsable"),
    "prompt_strategies": ReplyCount("judge_runs", "judge", lambda judge: judge.display_label, "items",
                                    "unparsable"),
    "explanation_evaluators": ReplyCount("llm_runs", "model", asks_as, "n_replies", "n_unparsable"),
    "metamorphic_recommender": ReplyCount("reader_reply_parsing", "recommender", lambda judge: judge.display_label,
                                          "replies", "not_a_list", what="not a list of titles"),
}


def replies_of(chapter: str, judge: JudgeSpec, load: Loader = load_table) -> str:
    """"3 of 40 replies unparsable (7.5%)": the share of ``judge``'s replies in ``chapter`` that held no answer, or
    why it is not known here."""
    count = REPLY_COUNTS.get(chapter)
    if count is None:
        return "this chapter's tables do not count its replies"
    try:
        unusable, replies = count.counts(chapter, load, judge)
    except (FileNotFoundError, KeyError) as missing:
        return f"no replies counted ({str(missing).strip(chr(39) + chr(34))})"
    if replies == 0:
        return "no replies"
    return f"{unusable:,} of {replies:,} replies {count.what} ({fmt(100 * unusable / replies, 1)}%)"


def judges_statement(numbers_of: str, chapter: str, judges: Sequence[JudgeSpec], load: Loader = load_table) -> str:
    """What a verdict of a variant with reader's judges rests on: whose numbers the claim read, and each reader's
    judge with the share of its replies in this chapter that held no answer."""
    if not judges:
        return ""
    yours = "; ".join(f"{judge.display_label}, {replies_of(chapter, judge, load)}" for judge in judges)
    read = (f"read from {numbers_of} numbers, not yours alone" if numbers_of == POOL_NUMBERS else
            f"read from {numbers_of} numbers in this variant's tables, not your judge's" if numbers_of else
            "read from no LLM judge's numbers")
    return f"Verdict {read}; your judge in this chapter: {yours}."


#: A copied chapter's page imports its original's page module (``from recjudge.chapters import <original> as page``).
_PAGE_MODULE = re.compile(r"^\s*from\s+recjudge\.chapters\s+import\s+(\w+)\s+as\s+page\b", re.MULTILINE)


def original_chapter(chapter: str, runs: Sequence[object] | None = None, root: Path | None = None) -> str | None:
    """The chapter whose claims the run ``chapter`` examines when the registry does not name it: a copy of a
    chapter, found through its notebook in the run plan (``runs``; default: the project's ``runplan.yaml``) — the
    original's own notebook run under a new name, or a copied notebook that still imports the original's page
    module. None for a chapter the registry names, a run the plan lacks, a demonstration run (a ``variant``, whose
    numbers are never set beside a paper's) and a notebook that is a copy of no chapter with claims."""
    examined = {claim.chapter for claim in CLAIMS}
    if chapter in examined:
        return None
    from recjudge.paths import project_root

    root = Path(root) if root is not None else project_root()
    run = _plan_run(chapter, runs, root)
    if run is None or run.variant:
        return None
    notebook = Path(run.notebook)
    if notebook.stem in examined:
        return notebook.stem
    path = notebook if notebook.is_absolute() else root / notebook
    try:
        modules = _PAGE_MODULE.findall(path.read_text(encoding="utf-8"))
    except OSError:
        return None
    return next((module for module in modules if module in examined), None)


def _plan_run(chapter: str, runs: Sequence[object] | None, root: Path | None = None) -> object | None:
    """The run named ``chapter`` in ``runs`` (default: the project's run plan; none when it cannot be read)."""
    if runs is None:
        from recjudge.compendium.runplan import RunPlanError, load_runplan

        try:
            runs = load_runplan(root=root)
        except RunPlanError:
            return None
    return next((run for run in runs if run.name == chapter), None)


def _reading_copy(load: Loader, original: str, copy: str) -> Loader:
    """``load`` with the original chapter's tables replaced by the copy's own (a claim reads its chapter's tables by
    the original's name)."""
    return lambda chapter, table: load(copy if chapter == original else chapter, table)


def no_claims_note(chapter: str) -> str:
    """A copied chapter's verdict box when the claims registry cannot tell which chapter it copies."""
    return (f"**No verdict:** the run `{chapter}` examines none of the papers' claims: the claims registry "
            "(`recjudge.compendium.claims`) names the chapters that examine claims, and this run is not one of them "
            "nor a copy of one (its notebook neither is a chapter's notebook nor imports a chapter's page module).")


def copy_note(chapter: str, original: str) -> str:
    """What a copied chapter's verdicts rest on."""
    return (f"*This chapter is a copy of {{doc}}`{original}`: the verdicts below read the claims of `{original}` "
            f"from this chapter's own tables (`results/{chapter}/`), at its own parameters.*")


def chapter_verdicts(chapter: str, load: Loader = load_table, judges: Sequence[dict | JudgeSpec] = (), *,
                     runs: Sequence[object] | None = None, root: Path | None = None,
                     lenient: bool = False) -> Markdown:
    """The verdicts of the claims a chapter examines, as the bullets that open its verdict box (glued as
    ``claims_checked``); a copy of a chapter (:func:`original_chapter`) gets its original's, read from its own
    tables; a demonstration run (a ``variant``) gets none, and any other run says plainly that it has none. In a
    variant, whose tables are of another scale or judge, a claim whose rows its tables lack says "not run in this
    build" and why; with a reader's ``judges`` (the chapter's ``judges`` parameter), each verdict says whose numbers
    it read and what share of each reader's judge's replies held no answer. ``runs`` and ``root``: the run plan and
    the project it lies in (default: the project's); ``lenient``: tables of another scale (a copy's), read as a
    variant's."""
    specs = [judge if isinstance(judge, JudgeSpec) else JudgeSpec.from_parameter(judge) for judge in judges]
    chosen = [claim for claim in CLAIMS if claim.chapter == chapter]
    if not chosen:
        run = _plan_run(chapter, runs, root)
        if in_variant() or run is not None and run.variant:
            return Markdown("")
        original = original_chapter(chapter, [run] if run is not None else [], root)
        if original is None:
            return Markdown(no_claims_note(chapter))
        copied = chapter_verdicts(original, _reading_copy(load, original, chapter), judges, lenient=True)
        return Markdown(f"{copy_note(chapter, original)}\n\n{copied.data}")
    records = registry(load, chosen, strict=not (lenient or in_variant()),
                       readers=[spec.display_label for spec in specs])
    if specs:
        records["reason"] = records["reason"].str.replace(NEEDS_A_CAPABLE_LLM, NEEDS_A_CAPABLE_LLM_BESIDE_YOURS,
                                                          regex=False)
    lines = [" ".join(part for part in (line, judges_statement(claim.numbers_of, chapter, specs, load)) if part)
             for line, claim in zip(verdict_bullets(records), chosen)]
    if not chosen:
        return Markdown("")
    first = next((i for i, claim in enumerate(chosen) if claim.claim == ANSWERS.get(chapter)), None)
    if first is None:
        raise KeyError(f"{chapter}: no claim answers the chapter's question (claims.ANSWERS)")
    answer = " ".join(part for part in (answer_line(next(records.iloc[[first]].itertuples(index=False))),
                                        judges_statement(chosen[first].numbers_of, chapter, specs, load)) if part)
    bullets = [line for i, line in enumerate(lines) if i != first]
    if len(bullets) > MAX_VERDICT_BULLETS:
        raise ValueError(f"{chapter}: {len(bullets)} claims beside the answer, more than a verdict box holds "
                         f"({MAX_VERDICT_BULLETS})")
    return Markdown("\n".join([answer, "", *(f"- {bullet}" for bullet in bullets)]).rstrip())


#: The claims matrix's class: on a phone its rows stack (claim, verdict, evidence one under the other) instead of
#: scrolling the evidence past the screen's edge (book/_static/recjudge.css).
MATRIX_CLASS = "recjudge-stacked"


def matrix_markdown(records: pd.DataFrame) -> str:
    """The claims as a three-column MyST table (claim, verdict, evidence) of class :data:`MATRIX_CLASS`; each claim
    names its paper and links to its chapter and the CSV its evidence comes from."""
    lines = ["```{table}", f":class: {MATRIX_CLASS}", "", "| Claim | Verdict | Evidence |", "|---|---|---|"]
    for row in records.itertuples(index=False):
        claim = (f"**{row.paper}** ({row.section}). {row.claim} ({{doc}}`chapter <{row.chapter}>`, "
                 f"{{download}}`table <../../results/{row.chapter}/{row.table}.csv>`)")
        evidence = "; ".join(part for part in (row.ours, f"paper: {row.paper_numbers}" if row.paper_numbers else "")
                             if part)
        cells = [claim, f"**{row.verdict}**: {row.reason}", evidence]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join([*lines, "```"])


#: The verdicts our own numbers decide (the others are decided by the paper's numbers or by what is missing).
OURS_DECIDE = (claim_evidence.REPRODUCED, claim_evidence.PARTLY, claim_evidence.NOT_REPRODUCED)
#: The findings the landing page opens with, in order: each one or two claims of the registry (by their words).
LANDING_FINDINGS = (
    ("The proxy metrics agree only weakly with users' serendipity ratings",
     "Every Pearson correlation of Table 2 is significant at p < 0.05"),
    ("Auxiliary data in the prompt makes the judge agree better with users",
     "Averaging several LLM judges agrees better with users than one"),
    ("Chain-of-thought gives the lowest MAE of the four prompts, for both LLMs",
     "An MAE below 1.0 shows that the CoT judge tells serendipitous items from the rest"),
    ("Certain LLMs evaluate explanations as well as or better than BLEU and ROUGE",
     "The LLM is asked about each aspect with the users' questionnaire statement"),
    ("Normalised surprise orders MSI ≥ kNN ≥ LSI",),
)
#: Where the at-a-glance run writes the landing page's findings (``book/intro.md`` includes it).
LANDING_FILE = "findings_first.md"


def landing_markdown(records: pd.DataFrame, chapters: str = "notebooks") -> str:
    """The landing page's findings: per finding of ``LANDING_FINDINGS`` one bullet, each claim's verdict in bold
    (chosen by the rule), the claim, its paper, the number behind it with its n, and a link to its chapter that reads
    as the chapter's title (``chapters``: the chapters' folder relative to the landing page). A claim the registry
    lacks is a KeyError."""
    by_claim = records.set_index("claim")
    bullets = []
    for finding in LANDING_FINDINGS:
        missing = [claim for claim in finding if claim not in by_claim.index]
        if missing:
            raise KeyError(f"the claims registry has no claim {missing[0]!r} (claims.LANDING_FINDINGS)")
        parts = []
        for claim in finding:
            row = by_claim.loc[claim]
            number = row["key_number"] if isinstance(row["key_number"], str) else ""
            # our n beside our number; a verdict the paper's numbers decide names the paper's n in its number
            if (row["verdict"] in OURS_DECIDE and pd.notna(row["n"]) and f"{int(row['n']):,}" not in number):
                number += f" (n = {int(row['n']):,})"
            parts.append(f"**{row['verdict'][0].upper()}{row['verdict'][1:]}:** {claim[0].lower()}{claim[1:]} "
                         f"({row['paper']}, {row['section']})" + (f": {number}" if number else ""))
        chapter = by_claim.loc[finding[0], "chapter"]
        # the link reads as the chapter's title (Sphinx writes it), not as a bare "Chapter"
        bullets.append("- " + ". ".join(parts) + f". Evidence: {{doc}}`{chapters}/{chapter}`.")
    return "\n".join(bullets) + "\n"


def write_landing(records: pd.DataFrame, notebook: str) -> Path:
    """Write the landing page's findings (``landing_markdown``) next to the run's tables, where ``book/intro.md``
    includes them from; returns the file."""
    path = results_path(notebook, "findings").parent / LANDING_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(landing_markdown(records), encoding="utf-8")
    return path
