"""The book's answer to its question, generated from the claims registry (never typed): the landing page opens with
it (:func:`answer_markdown`, written by the at-a-glance run next to its tables) and the closing page "What we
learned" gives it paper by paper (:func:`learned_markdown`).

Both read a build's registry (:func:`recjudge.compendium.claims.registry`) and the papers' own LLM rows priced in
labels (``recjudge.trust.papers_worth.paper_judges_worth``, passed in by the notebook: this layer does not import
part V's package).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from recjudge.compendium import claim_evidence, claims
from recjudge.compendium.pages import fmt
from recjudge.compendium.results import results_path
from recjudge.metaeval.papers_vs_baselines import tokutake_table1_vs_baselines

QUESTION = "Can LLMs judge recommender systems beyond accuracy?"
#: Where the at-a-glance run writes the answer (``book/intro.md`` includes it above the findings).
ANSWER_FILE = "answer_first.md"
#: The caveat the answer always carries: the build's LLM judges are tiny local models and recorded scores.
#: The title of the box that opens the landing page.
ANSWER_TITLE = "The short answer"
CAVEAT = ("**No capable LLM judged anything here.** This build's LLM numbers come from tiny local models "
          "(SmolLM2-135M-Instruct and others under 2B parameters) and gpt-3.5-turbo scores recorded by a third party; "
          "no claim about what a capable LLM judge can do is tested by them.")


def verdict_counts(records: pd.DataFrame) -> str:
    """"3 contradicted by the paper's own numbers, 4 reproduced, ...": the registry's verdicts counted, in the rule's
    order, those with none left out."""
    counts = records["verdict"].value_counts()
    return ", ".join(f"{int(counts[v])} {v}" for v in claim_evidence.VERDICTS if v in counts.index)


def _too_few(records: pd.DataFrame) -> pd.DataFrame:
    """The claims not testable here for too few answers as well (their reason says so)."""
    return records[(records["verdict"] == claim_evidence.NOT_TESTABLE)
                   & records["reason"].str.contains("too few answers", regex=False)]


def answer_markdown(records: pd.DataFrame, paper_worth: pd.DataFrame) -> str:
    """The short answer that opens the landing page: what the papers claim, what their own numbers support (the
    strength of their judges, the labels they would save, the constant answer), what this build tested (the verdicts
    counted) and the caveat :data:`CAVEAT`; every number read from ``records`` and ``paper_worth``."""
    if paper_worth.empty:
        raise ValueError("the papers' LLM rows priced in labels are empty (trust.papers_worth.paper_judges_worth)")
    by_claim = records.set_index("claim")
    strongest = paper_worth.loc[paper_worth["pearson_pct"].abs().idxmax()]
    cot = by_claim.loc[claims.ANSWERS["prompt_strategies"]]
    too_few = _too_few(records)
    not_testable = records[records["verdict"] == claim_evidence.NOT_TESTABLE]
    lines = [
        f"```{{admonition}} {ANSWER_TITLE}",
        ":class: important",
        f"**{QUESTION}** The papers' own numbers are the book's answer, since they need no LLM to read:",
        "",
        # the caveat first: at 1280 x 800 the last bullet falls below the first screen (tests/test_book_render.py)
        f"- {CAVEAT}",
        f"- **The papers' judges save at most {fmt(paper_worth['labels_saved_pct'].max(), 1)}% of the human "
        f"labels.** Across the {len(paper_worth)} LLM rows of Kang et al.'s Tables 2, 4–5 "
        f"and Zhang et al.'s Table 1, Pearson with users lies between {fmt(paper_worth['pearson_pct'].min(), 1)}% "
        f"and {fmt(paper_worth['pearson_pct'].max(), 1)}% (strongest: {strongest['judge']}, {strongest['paper']}, "
        f"{strongest['table']}, n = {int(strongest['n']):,}): by the ρ² rule of part V, a judge correlating ρ with "
        "users saves a share ρ² of the labels a given precision needs.",
        f"- **{_constant_heading()}** {cot['key_number'][0].upper()}{cot['key_number'][1:]} "
        f"(Tokutake et al.: *{cot.name}*, **{cot['verdict']}**).",
        f"- **Verdicts, by one rule, on {len(records)} claims:** {verdict_counts(records)}. Of the "
        f"{len(not_testable)} not testable here, {len(too_few)} would also need more answers than this build judged "
        f"({_beyond_the_data(too_few)}).",
        "```",
    ]
    return "\n".join(lines) + "\n"


def _beyond_the_data(too_few: pd.DataFrame) -> str:
    """"1 of them more than its dataset holds": how many of the claims short of answers no sample of their dataset
    can settle."""
    beyond = int(too_few["reason"].str.contains("answers the dataset holds", regex=False).sum())
    return f"{beyond or 'none'} of them more than its dataset holds"


def _constant_heading() -> str:
    """The constant-answer bullet's heading, chosen by the paper's own numbers: does answering the most frequent level
    of g err less (MAE) than every LLM row of Tokutake et al.'s Table 1?"""
    table1 = tokutake_table1_vs_baselines()
    if table1["constant_beats_mae"].all():
        return f"Answering a constant errs less than every one of the {len(table1)} judges of a paper's table."
    if table1["constant_beats_mae"].any():
        return (f"Answering a constant errs less than {int(table1['constant_beats_mae'].sum())} of the {len(table1)} "
                "judges of a paper's table.")
    return f"Every one of the {len(table1)} judges of a paper's table errs less than answering a constant."


def write_answer(records: pd.DataFrame, paper_worth: pd.DataFrame, notebook: str) -> Path:
    """Write :func:`answer_markdown` next to the run's tables, where ``book/intro.md`` includes it from."""
    path = results_path(notebook, "answer").parent / ANSWER_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(answer_markdown(records, paper_worth), encoding="utf-8")
    return path


#: How a reader settles a claim that no capable judge could test here (``{chapter}``: the chapter's run name).
SETTLE_COMMAND = "recjudge run --judge PROVIDER:MODEL --profile paper --only {chapter}"


def learned_markdown(records: pd.DataFrame, prefix: str = "") -> str:
    """The closing page's body, per paper: what reproduced, what the paper's own numbers contradict, what could not
    be tested and what would settle it (the command with a capable judge, and the answers it needs where the
    registry knows), and what was hard (every difference between the paper's setup and ours)."""
    sections = []
    for paper, rows in records.groupby("paper", sort=False):
        def claims_with(*verdicts: str) -> pd.DataFrame:
            return rows[rows["verdict"].isin(verdicts)]

        lines = [f"## {paper}", ""]
        for title, chosen in (("What reproduced", claims_with(claim_evidence.REPRODUCED, claim_evidence.PARTLY)),
                              ("What the paper's own numbers contradict", claims_with(claim_evidence.CONTRADICTED)),
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
                             if pd.notna(row.n_needed) else ""))
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


__all__ = ["ANSWER_FILE", "ANSWER_TITLE", "CAVEAT", "QUESTION", "SETTLE_COMMAND", "answer_markdown", "learned_markdown",
           "verdict_counts", "write_answer"]
