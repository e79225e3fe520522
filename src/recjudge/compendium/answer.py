"""The book's answer to its question, generated from the claims registry (never typed): the landing page opens with
it (:func:`answer_markdown`, written by the at-a-glance run next to its tables) and the closing page "What we
learned" gives it paper by paper (:func:`learned_markdown`).

Both read a build's registry (:func:`recjudge.compendium.claims.registry`); the answer also reads the papers' own
pooled LLM rows priced in labels (``recjudge.trust.papers_worth.paper_judges_worth``) and their human annotators'
rows (``recjudge.metaeval.paper_judges``), passed in by the notebook (this layer does not import part V's
package).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from recjudge.compendium import claim_evidence
from recjudge.compendium.claim_evidence import NEEDS_A_CAPABLE_LLM
from recjudge.compendium.pages import fmt
from recjudge.compendium.results import results_path
from recjudge.metaeval import paper_judges
from recjudge.metaeval.paper_judges import POOLED_READINGS
from recjudge.metaeval.papers_vs_baselines import tokutake_table1_vs_baselines

QUESTION = "Can LLMs judge recommender systems beyond accuracy?"
#: Where the at-a-glance run writes the answer (``book/intro.md`` includes it above the findings).
ANSWER_FILE = "answer_first.md"
#: The title of the box that opens the landing page.
ANSWER_TITLE = "The short answer"
#: The caveat the answer always carries: the build's LLM judges are tiny local models and recorded scores.
CAVEAT = ("**No capable LLM judged anything here.** The book's own judges are tiny local models and recorded "
          "gpt-3.5-turbo scores, so the answer reads the papers' own numbers.")
#: The registry's verdicts in the few words a newcomer reads first: a claim holds, holds in part, fails, or cannot
#: be decided here (each verdict of ``claim_evidence.VERDICTS`` in one group).
VERDICT_GROUPS = (
    ("hold", (claim_evidence.REPRODUCED, claim_evidence.SUPPORTED, claim_evidence.SUPPORTED_BY_TEXT)),
    ("hold in part", (claim_evidence.PARTLY,)),
    ("fail", (claim_evidence.NOT_REPRODUCED, claim_evidence.CONTRADICTED, claim_evidence.CONTRADICTED_BY_TEXT)),
    ("cannot be decided here", (claim_evidence.NOT_COMPARABLE, claim_evidence.NOT_TESTABLE, claim_evidence.NOT_RUN)),
)
#: How strongly a correlation r ties a judge to the users, in words (this book's reading, the same everywhere): below
#: the first bound "weakly", below the second "modestly", else "strongly".
STRENGTH_WORDS = ((0.2, "weakly"), (0.4, "modestly"), (1.01, "strongly"))


#: What a share of labels saved is worth, in words: below the first bound, the first phrase, and so on.
WORTH_WORDS = ((1.0, "Worth less than a label in a hundred"), (10.0, "Worth a few labels in a hundred"),
               (100.01, "Worth many labels"))


def worth(saved_pct: float) -> str:
    """:data:`WORTH_WORDS`' phrase for a share of labels saved (%)."""
    return next(words for bound, words in WORTH_WORDS if saved_pct < bound)


def strength(r: float) -> str:
    """:data:`STRENGTH_WORDS`' word for a correlation ``r``."""
    return next(word for bound, word in STRENGTH_WORDS if abs(r) < bound)


def placement(low: float, high: float, reference_low: float, reference_high: float) -> str:
    """Where an interval [low, high] lies against a reference range: "within the range of" when they meet, else
    "above" or "below"."""
    return ("within the range of" if low <= high and low <= reference_high and high >= reference_low else
            "above" if low > reference_high else "below")


def grouped_verdicts(records: pd.DataFrame) -> str:
    """"7 hold, 3 hold in part, 5 fail and 8 cannot be decided here": the registry's verdicts counted by
    :data:`VERDICT_GROUPS`, the empty groups left out."""
    counts = records["verdict"].value_counts()
    parts = [f"{int(sum(counts.get(v, 0) for v in verdicts))} {words}" for words, verdicts in VERDICT_GROUPS
             if any(v in counts.index for v in verdicts)]
    return ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else "".join(parts)


def verdict_counts(records: pd.DataFrame) -> str:
    """"3 contradicted by the paper's own numbers, 4 reproduced, ...": the registry's verdicts counted, in the rule's
    order, those with none left out."""
    counts = records["verdict"].value_counts()
    return ", ".join(f"{int(counts[v])} {v}" for v in claim_evidence.VERDICTS if v in counts.index)


def _too_few(records: pd.DataFrame) -> pd.DataFrame:
    """The claims not testable here for too few answers as well (their reason says so)."""
    return records[(records["verdict"] == claim_evidence.NOT_TESTABLE)
                   & records["reason"].str.contains("too few answers", regex=False)]


def _r(pct: float) -> str:
    """A correlation in per cent as r: 28.65 -> "0.29"."""
    return fmt(pct / 100, 2)


def answer_markdown(records: pd.DataFrame, paper_worth: pd.DataFrame, humans: pd.DataFrame,
                    figure: str = "", chapters: str = "notebooks/") -> str:
    """The short answer that opens the landing page, in three plain points a newcomer reads in half a minute, each
    linked to its evidence and glossary terms: what this build could decide (the caveat and the registry's verdicts,
    ``records``, grouped by :data:`VERDICT_GROUPS`), how strongly the papers' best LLM judge agrees with the users
    beside a second human reading of the same items (``humans``: the papers' annotator rows,
    ``metaeval.paper_judges``), and what such a judge is worth (labels saved by the ρ² rule, ``paper_worth``; a
    constant answer's error against its use, ranking). ``figure``: the headline figure's MyST, placed after the box;
    ``chapters``: the chapters' folder relative to the page. Every number and every word that depends on one is read
    from the tables; correlations are printed as r."""
    if paper_worth.empty:
        raise ValueError("the papers' pooled LLM rows priced in labels are empty (trust.papers_worth)")
    best = paper_worth.loc[paper_worth["pearson_pct"].abs().idxmax()]
    pooled_humans = humans[humans["reading"].isin(POOLED_READINGS)]
    low, high = float(pooled_humans["pearson_pct"].min()), float(pooled_humans["pearson_pct"].max())
    best_low, best_high = float(best["pearson_ci_low"]), float(best["pearson_ci_high"])
    place = placement(best_low, best_high, low, high)
    lines = [
        f"```{{admonition}} {ANSWER_TITLE}",
        ":class: important",
        f"**{QUESTION}**",
        "",
        # the caveat first: at 1280 x 800 the last point falls below the first screen (tests/test_book_render.py)
        f"- {CAVEAT} Of the {len(records)} claims one rule read, {grouped_verdicts(records)} "
        f"({{doc}}`every claim <{chapters}at_a_glance>`).",
        f"- **{strength(best['pearson_pct'] / 100).capitalize()}, {place} a second human reading.** The papers' "
        f"strongest LLM judge agrees with users at {{term}}`r <Pearson correlation>` = {_r(best['pearson_pct'])} "
        f"[{_r(best_low)}, {_r(best_high)}] ({best['judge']}, {best['paper']}); "
        f"{paper_judges.annotators(humans)} human annotators reach r = {_r(low)} to {_r(high)}, the "
        f"{{term}}`human ceiling <Human ceiling>` ({{doc}}`every judge on one scale <{chapters}trust_judges>`).",
        f"- **{worth(best['labels_saved_pct'])}, read by ranking, not error.** By the {{term}}`ρ² rule` that "
        f"judge saves {fmt(best['labels_saved_pct'], 1)}% of the human labels a study needs; {_constant_sentence()} "
        f"({{doc}}`evidence <{chapters}prompt_strategies>`).",
        "```",
    ]
    if figure:
        lines += ["", figure]
    return "\n".join(lines) + "\n"


def _constant_sentence() -> str:
    """Answering the most frequent level of Tokutake et al.'s g against their Table 1, by the paper's own numbers:
    the comparison on error, and what a constant does for ranking (nothing: every item ties)."""
    table1 = tokutake_table1_vs_baselines()
    beaten = int(table1["constant_beats_mae"].sum())
    answer = table1["constant_mode_answer"].iloc[0]
    errs_less = f"answering {answer} for every item errs less ({{term}}`MAE` on the ground truth {{term}}`g`) than "
    if beaten == len(table1):
        start = errs_less + f"all {len(table1)} judges of "
    elif beaten:
        start = errs_less + f"{beaten} of the {len(table1)} judges of "
    else:
        return (f"each of the {len(table1)} judges of Tokutake et al.'s Table 1 errs less than answering a constant, "
                f"which ranks nothing ({{term}}`AUC` {fmt(CHANCE_AUC, 1)})")
    return (start + f"Tokutake et al.'s Table 1, yet ranks nothing ({{term}}`AUC` {fmt(CHANCE_AUC, 1)}): error "
            "rewards the scale")


def _beyond_the_data(too_few: pd.DataFrame) -> str:
    """"1 of them more than its dataset holds": how many of the claims short of answers no sample of their dataset
    can settle."""
    beyond = int(too_few["reason"].str.contains("answers the dataset holds", regex=False).sum())
    return f"{beyond or 'none'} of them more than their dataset holds"


def write_answer(records: pd.DataFrame, paper_worth: pd.DataFrame, humans: pd.DataFrame, notebook: str,
                 figure: str = "") -> Path:
    """Write :func:`answer_markdown` next to the run's tables, where ``book/intro.md`` includes it from."""
    path = results_path(notebook, "answer").parent / ANSWER_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(answer_markdown(records, paper_worth, humans, figure), encoding="utf-8")
    return path


#: The AUC of a judge that ranks nothing (a constant answer, Random): chance.
CHANCE_AUC = 0.5
#: How a reader settles a claim that no capable judge could test here (``{chapter}``: the chapter's run name).
SETTLE_COMMAND = "recjudge run --judge PROVIDER:MODEL --profile paper --only {chapter}"
#: ... and one that lacks data, not a judge (the chapter again, once the data mirror holds them).
SETTLE_WITH_DATA = "recjudge run --only {chapter}"


#: The verdicts the papers' own numbers or text decide (read at the paper's n), not this build's.
PAPERS_OWN_VERDICTS = (claim_evidence.SUPPORTED, claim_evidence.SUPPORTED_BY_TEXT, claim_evidence.CONTRADICTED,
                       claim_evidence.CONTRADICTED_BY_TEXT)


def _grouped(records: pd.DataFrame, words: str) -> pd.DataFrame:
    """The records whose verdict falls in the :data:`VERDICT_GROUPS` group named ``words``."""
    verdicts = dict(VERDICT_GROUPS)[words]
    return records[records["verdict"].isin(verdicts)]


def _claim_list(rows: pd.DataFrame, prefix: str) -> str:
    """"*claim* (paper, section; chapter link); ...": the claims of ``rows``, each linked to its chapter."""
    return "; ".join(f"*{row.claim}* ({row.paper}, {row.section}; {{doc}}`{prefix}{row.chapter}`)"
                     for row in rows.itertuples(index=False))


def synthesis_markdown(records: pd.DataFrame, paper_worth: pd.DataFrame, humans: pd.DataFrame,
                       prefix: str = "") -> str:
    """The closing page's opening, across the papers: what the evidence as a whole says about LLM judges (the claims
    about capable judges that hold, how strongly the papers' best judge agrees with users beside a second human
    reading, the claims that fail), what it does not say (the claims about capable judges this build cannot decide,
    and why; the claims that hold in part), and what would change it (a capable judge on the chapters, with the
    answers the papers' own effects need; the data a claim lacks; new numbers for what the papers' own numbers
    decide). Every number and verdict word is read from ``records`` (the registry, grouped by
    :data:`VERDICT_GROUPS`), ``paper_worth`` and ``humans`` (as in :func:`answer_markdown`); ``prefix``: the
    chapters' folder relative to the page."""
    capable = records[records["about_capable_llms"].astype(bool)]
    hold, part, fail, undecided = (words for words, _ in VERDICT_GROUPS)
    holding, failing, partial = _grouped(capable, hold), _grouped(records, fail), _grouped(records, part)
    best = paper_worth.loc[paper_worth["pearson_pct"].abs().idxmax()]
    pooled_humans = humans[humans["reading"].isin(POOLED_READINGS)]
    low, high = float(pooled_humans["pearson_pct"].min()), float(pooled_humans["pearson_pct"].max())
    place = placement(float(best["pearson_ci_low"]), float(best["pearson_ci_high"]), low, high)
    own = int(holding["verdict"].isin(PAPERS_OWN_VERDICTS).sum())
    says = [f"Of the {len(capable)} claims about what capable LLM judges do, {len(holding)} {hold}"
            + (f", {'each' if own == len(holding) else f'{own} of them'} by the papers' own numbers read at the "
               f"papers' n: {_claim_list(holding, prefix)}." if len(holding) else "."),
            f"The strongest agreement with users a paper prints for an LLM judge is {{term}}`r <Pearson correlation>` "
            f"= {_r(best['pearson_pct'])} [{_r(best['pearson_ci_low'])}, {_r(best['pearson_ci_high'])}] "
            f"({best['judge']}, {best['paper']}): it agrees {strength(best['pearson_pct'] / 100)}, {place} the "
            f"r = {_r(low)} to {_r(high)} of {paper_judges.annotators(humans)} human annotators, and saves "
            f"{fmt(best['labels_saved_pct'], 1)}% of the human labels by the {{term}}`ρ² rule`."]
    if len(failing):
        about = int(failing["about_capable_llms"].astype(bool).sum())
        says.append(f"{len(failing)} claims {fail}, {about or 'none'} of them about capable judges: "
                    f"{_claim_list(failing, prefix)}.")
    open_capable = _grouped(capable, undecided)
    needs_judge = open_capable["reason"].str.contains(NEEDS_A_CAPABLE_LLM, regex=False)
    tested = capable[capable["verdict"].isin((claim_evidence.REPRODUCED, claim_evidence.PARTLY,
                                              claim_evidence.NOT_REPRODUCED))]
    not_said = [f"{len(open_capable)} of the {len(capable)} claims about capable judges {undecided}"
                + (f", {int(needs_judge.sum())} of them for want of a capable LLM: this build's LLM judges are tiny "
                   "local models" if needs_judge.any() else "") + ".",
                f"{len(tested) or 'None'} of the {len(capable)} {'was' if len(tested) == 1 else 'were'} tested "
                "with a judge of this build" + ("." if len(tested) else ": what holds, holds on the papers' own "
                                                                         "numbers alone.")]
    if len(partial):
        not_said.append(f"{len(partial)} claims {part}: {_claim_list(partial, prefix)}.")
    untested = records[records["verdict"].isin((claim_evidence.NOT_TESTABLE, claim_evidence.NOT_RUN))]
    for_judge = untested[untested["reason"].str.contains(NEEDS_A_CAPABLE_LLM, regex=False)]
    sized = for_judge[for_judge["n_needed"].notna()]
    change = []
    if len(for_judge):
        change.append(f"Running their chapters with a capable judge (`{SETTLE_COMMAND.format(chapter='CHAPTER')}`) "
                      f"would test {len(for_judge)} claims"
                      + (f"; {len(sized)} of them need {int(sized['n_needed'].min()):,} to "
                         f"{int(sized['n_needed'].max()):,} answers to detect the papers' own effects, "
                         f"{_beyond_the_data(sized)}" if len(sized) else "") + ".")
    change += [f"*{row.claim}* ({row.paper}) {row.reason}." for row in untested[
        ~untested.index.isin(for_judge.index)].itertuples(index=False)]
    decided = records[records["verdict"].isin(PAPERS_OWN_VERDICTS)]
    if len(decided):
        change.append(f"The {len(decided)} claims the papers' own numbers or text decide change only with new "
                      "numbers: the errors and pairings the papers do not print, or a larger study.")
    return "\n".join(["## The evidence as a whole", "", "**What it says about LLM judges.** " + " ".join(says), "",
                      "**What it does not say.** " + " ".join(not_said), "",
                      "**What would change it.** " + " ".join(change), ""])


def learned_markdown(records: pd.DataFrame, prefix: str = "", heading: str = "##") -> str:
    """The closing page's body, per paper: what reproduced, what the paper's own numbers or text support and
    contradict, what did not reproduce or could not be compared, what could not be tested and what would settle it
    (the command with a capable judge, and the answers it needs where the registry knows), and what was hard (every
    difference between the paper's setup and ours). Every claim of ``records`` appears once; ``heading``: the
    Markdown heading of a paper's section."""
    sections = []
    for paper, rows in records.groupby("paper", sort=False):
        def claims_with(*verdicts: str) -> pd.DataFrame:
            return rows[rows["verdict"].isin(verdicts)]

        lines = [f"{heading} {paper}", ""]
        for title, chosen in ((f"What {claim_evidence.REPRODUCED}, wholly or {claim_evidence.PARTLY}",
                               claims_with(claim_evidence.REPRODUCED, claim_evidence.PARTLY)),
                              ("What the paper's own numbers or text support",
                               claims_with(claim_evidence.SUPPORTED, claim_evidence.SUPPORTED_BY_TEXT)),
                              ("What the paper's own numbers or text contradict",
                               claims_with(claim_evidence.CONTRADICTED, claim_evidence.CONTRADICTED_BY_TEXT)),
                              ("What did not reproduce", claims_with(claim_evidence.NOT_REPRODUCED)),
                              ("What could not be compared", claims_with(claim_evidence.NOT_COMPARABLE))):
            if chosen.empty:
                continue
            lines.append(f"**{title}.**")
            lines += [f"- *{row.claim}* ({row.section}, **{row.verdict}**): {row.key_number or row.reason} "
                      f"({{doc}}`chapter <{prefix}{row.chapter}>`)" for row in chosen.itertuples(index=False)]
            lines.append("")
        untested = claims_with(claim_evidence.NOT_TESTABLE, claim_evidence.NOT_RUN)
        if not untested.empty:
            lines.append("**What could not be tested, and what would settle it.**")
            for row in untested.itertuples(index=False):
                beyond = "answers the dataset holds" in row.reason
                settle = (f"`{SETTLE_COMMAND.format(chapter=row.chapter)}`"
                          + (f" on at least {int(row.n_needed):,} answers"
                             + (" (a larger study than this dataset)" if beyond else "")
                             if pd.notna(row.n_needed) else "")
                          if claim_evidence.NEEDS_A_CAPABLE_LLM in row.reason else
                          # what it lacks is data, not a judge: the data in the mirror, then the chapter again
                          f"the data it needs in the data mirror (`RECJUDGE_DATA_MIRROR`), then "
                          f"`{SETTLE_WITH_DATA.format(chapter=row.chapter)}`")
                lines.append(f"- *{row.claim}* ({row.section}, **{row.verdict}**): {row.reason}. To settle it: "
                             f"{settle}.")
            lines.append("")
        hard = sorted({part.strip() for text in rows["differences"].dropna() for part in str(text).split(";")
                       if part.strip()})
        if hard:
            lines.append("**What was hard (where our setup differs from the paper's).**")
            lines += [f"- {part}" for part in hard]
            lines.append("")
        sections.append("\n".join(lines))
    return "\n".join(sections)


__all__ = ["ANSWER_FILE", "ANSWER_TITLE", "CAVEAT", "CHANCE_AUC", "QUESTION", "SETTLE_COMMAND", "SETTLE_WITH_DATA",
           "VERDICT_GROUPS", "answer_markdown", "grouped_verdicts", "learned_markdown", "placement",
           "synthesis_markdown", "verdict_counts", "write_answer"]
