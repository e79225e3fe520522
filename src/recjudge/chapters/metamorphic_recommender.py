"""The page of the chapter "Metamorphic testing of an LLM recommender" (Khirbat et al.): its opening box, the prompt
and its relations, the tables beside the paper's and the glued findings with the rules that choose their words."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from recjudge.compendium import figures, pages
from recjudge.compendium.prose import Prose
from recjudge.compendium.results import save_table
from recjudge.compendium.tables import count, format_table, header_label, number, p_value, paper_beside_ours, percent
from recjudge.data import movielens_name
from recjudge.llm.judge_spec import reader_labels
from recjudge.metamorphic import rank, relations, study
from recjudge.metamorphic.recommender import TitleMatcher, parse_titles

#: The similarities of the paper's tables, with their formats.
PAPER_FORMATS = {"kendall_tau": number(3, label="Kendall τ"), "rbo": number(3, label="RBO"),
                 "overlap": number(3, label="Overlap ratio")}
SIMILARITIES = ["kendall_tau", "rbo", "overlap"]
#: How the reply-parsing tables show their columns.
PARSING_FORMATS = {"replies": count(), "not_a_list": count(label="Not a list"),
                   "mean_titles": number(1, label="Titles per reply"),
                   "ranked_entries": count(label="Ranked entries"),
                   "matched_share": percent(0, label="Matched to the catalogue (%)")}
#: The title matcher's thresholds compared (the chapter's default, 90, among them).
MATCH_THRESHOLDS = [80.0, 85.0, 90.0, 95.0, 100.0]
#: The page's sentences (``notebooks/prose/metamorphic_recommender.md``).
PROSE = Prose("metamorphic_recommender")
#: Khirbat et al.'s Table 4 reports every relation's change significant at p below this.
PAPER_TABLE4_P_BELOW = 0.0001


def wrap(body: str) -> str:
    """A prompt's text wrapped at 72 characters, line by line, for a code block that fits the column."""
    return "\n".join(textwrap.fill(line, 72) for line in body.splitlines())


def opening(movielens, users: Sequence, replies: pd.DataFrame, *, dataset: str, user_seed: int, iterations: int,
            temperature: float, judges: Sequence[dict]) -> Markdown:
    """The box that opens the chapter: data, recommender, sample and similarities, and the noise-level caveat."""
    recommender = PROSE("opening.recommender", temperature=f"{temperature:g}")
    if judges:
        recommender += "; " + PROSE("opening.recommender.readers", readers=", ".join(reader_labels(judges)))
    return pages.opening([
        ("Data", PROSE("opening.data", dataset=movielens_name(dataset), status=movielens.status,
                       n_ratings=f"{len(movielens.ratings):,}",
                       n_users=f"{movielens.ratings['user_id'].nunique():,}")),
        ("Recommender", recommender),
        ("Sample", PROSE("opening.sample", users=pages.count(len(users), "user"), seed=user_seed,
                         n_eligible=len(study.eligible_users(movielens.ratings)), n_replies=f"{len(replies):,}",
                         iterations=iterations)),
        ("Similarity", PROSE("opening.similarity", persistence=f"{rank.RBO_PERSISTENCE:g}")),
    ], PROSE("opening.caveat"))


# ----------------------------------------------------------------------------------------------------------------
# The prompt and the relations


def example_prompt(groups: Sequence[study.PlanGroup]) -> str:
    """The prompt of the first request of the condition l = 5 (the shortest list of liked items)."""
    example = groups[[group.condition for group in groups].index("l=5")].requests[0]
    return example.messages[0]["content"]


def show_prompt(groups: Sequence[study.PlanGroup]) -> Markdown:
    """The recommender's prompt, as a wrapped text block."""
    return Markdown("```text\n" + wrap(example_prompt(groups)) + "\n```")


def relation_examples(prompt: str) -> list[tuple[str, str]]:
    """The prompt under each relation: MR1 and MR2 change the ratings, MR3 and MR4 the liked-items part."""
    def history(change: Callable[[str], str]) -> str:
        return relations.apply_to_span(prompt, study.HISTORY_START, study.HISTORY_END, change)

    return [("MR1: Multiply", relations.mr1_multiply(prompt)), ("MR2: Addition", relations.mr2_shift(prompt)),
            ("MR3: Spaces", history(relations.mr3_spaces)),
            ("MR4: Random words", history(lambda t: relations.mr4_random_words(t, seed=0)))]


def show_relations(groups: Sequence[study.PlanGroup]) -> Markdown:
    """The example prompt under each relation, one text block each."""
    rows = relation_examples(example_prompt(groups))
    return Markdown("\n\n".join(f"**{name}**\n\n```text\n{wrap(text)}\n```" for name, text in rows))


# ----------------------------------------------------------------------------------------------------------------
# Reading the replies


def show_title_matcher(matcher: TitleMatcher, replies: pd.DataFrame, notebook: str, dataset: str) -> None:
    """Per threshold, the catalogue titles with a near twin and the reply titles matched (a collapsed table);
    saves it."""
    collisions = matcher.collision_rate(MATCH_THRESHOLDS, sample=1000, seed=0).rename_axis("threshold").reset_index()
    parsed = [title for reply in replies["reply"] for title in parse_titles(reply).titles]
    scores = pd.Series([matcher.match(title)[1] for title in parsed], dtype=float)
    collisions["reply_titles_matched"] = [(scores >= t).mean() if len(scores) else np.nan for t in MATCH_THRESHOLDS]
    save_table(collisions.assign(catalogue=movielens_name(dataset)), notebook, "title_matcher_thresholds")
    display(format_table(collisions, {"threshold": number(0, label="Threshold"),
                                      # a label long enough to read as a sentence: in the prose file
                                      "collision_rate": percent(1, label=PROSE("title_matcher.collisions")),
                                      "reply_titles_matched": percent(1, label="Reply titles matched (%)")},
                         caption=PROSE("title_matcher.caption", n_titles=f"{len(parsed):,}"),
                         full_table=(notebook, "title_matcher_thresholds"), audit=True))


def show_reply_parsing(replies: pd.DataFrame, notebook: str) -> Markdown:
    """Replies per table that are lists, titles found and matched (saved), and how unmatched titles count."""
    parse_summary = save_table(study.reply_summary(replies), notebook, "reply_parsing")
    display(format_table(parse_summary, PARSING_FORMATS,
                         caption=PROSE("reply_parsing.caption"),
                         full_table=(notebook, "reply_parsing"), audit=True))
    listed = int(parse_summary["ranked_entries"].sum())
    unmatched = listed - int(round((parse_summary["ranked_entries"]
                                    * parse_summary["matched_share"].fillna(0)).sum()))
    return Markdown(PROSE("reply_parsing.unmatched", n_entries=f"{listed:,}", n_unmatched=f"{unmatched:,}",
                          unmatched_share=pages.fmt(100 * unmatched / max(listed, 1), 0)))


# ----------------------------------------------------------------------------------------------------------------
# Tables 2 to 4


def show_table2(table2: pd.DataFrame, notebook: str):
    """Table 2 (the list length k), the paper's beside ours; saves ours."""
    save_table(table2, notebook, "table2_k")
    return paper_beside_ours(table2[["condition", *SIMILARITIES]], study.PAPER_TABLE_2, "condition", PAPER_FORMATS,
                             labels={"condition": "k"}, caption=PROSE("table2.caption"),
                             full_table=(notebook, "table2_k"))


def show_table3(table3: pd.DataFrame, notebook: str):
    """Table 3 (the number of liked items l), the paper's beside ours; saves ours."""
    save_table(table3, notebook, "table3_l")
    return paper_beside_ours(table3[["condition", *SIMILARITIES]], study.PAPER_TABLE_3, "condition", PAPER_FORMATS,
                             labels={"condition": "l"}, caption=PROSE("table3.caption"),
                             full_table=(notebook, "table3_l"), audit=True)


def _printed_sd_range() -> str:
    """"0.001 to 0.012": the range of the standard deviations Khirbat et al.'s Table 4 prints."""
    from recjudge import papers

    printed = papers.table("khirbat2024metamorphic_table4")[["kendall_tau_sd", "rbo_sd", "overlap_sd"]].stack()
    return f"{pages.fmt(printed.min(), 3)} to {pages.fmt(printed.max(), 3)}"


def show_table4(table4: pd.DataFrame, per_iteration: pd.DataFrame, notebook: str):
    """Table 4 (the relations), the paper's beside ours, and our SDs and p values (a collapsed table); saves ours
    and the iteration means."""
    save_table(table4, notebook, "table4_relations")
    save_table(per_iteration, notebook, "table4_iterations")
    paper4 = study.PAPER_TABLE_4.set_index("relation").loc[table4["relation"]].reset_index()
    display(paper_beside_ours(table4[["relation", *SIMILARITIES]], paper4, "relation", PAPER_FORMATS,
                              labels={"relation": "Relation"},
                              caption=PROSE("table4.caption", paper_p=f"{PAPER_TABLE4_P_BELOW:g}"),
                              full_table=(notebook, "table4_relations")))
    spread = table4[["relation", "kendall_tau_sd", "rbo_sd", "overlap_sd", "kendall_tau_p", "rbo_p", "overlap_p"]]
    return format_table(spread, {"kendall_tau_sd": number(3, label="SD τ"), "rbo_sd": number(3, label="SD RBO"),
                                 "overlap_sd": number(3, label="SD overlap"), "kendall_tau_p": p_value(label="p τ"),
                                 "rbo_p": p_value(label="p RBO"), "overlap_p": p_value(label="p overlap")},
                        labels={"relation": "Relation"},
                        caption=PROSE("table4.spread.caption", paper_sds=_printed_sd_range()),
                        full_table=(notebook, "table4_relations"), audit=True)


def draw_table4(table4: pd.DataFrame) -> None:
    """Figure fig-metamorphic-relations: Table 4 relation by relation, RBO and overlap ratio (Kendall's τ is mostly
    undefined for our replies), ours beside the paper's, each with ± its SD over the iterations."""
    import matplotlib.pyplot as plt

    paper = study.PAPER_TABLE_4.set_index("relation").loc[table4["relation"]]
    fig, axes = plt.subplots(1, 2, figsize=(figures.FIGURE_WIDTH_IN, 3.6), sharey=True)
    y = np.arange(len(table4))[::-1]
    for ax, measure in zip(axes, ("rbo", "overlap")):
        for offset, (label, frame, hollow) in zip((0.15, -0.15), (("paper (GPT-3.5-turbo)", paper, True),
                                                                   ("ours (SmolLM2-135M)", table4, False))):
            values = frame[measure].to_numpy(dtype=float)
            spread = frame[f"{measure}_sd"].to_numpy(dtype=float)
            colour = figures.PALETTE[0 if hollow else 1]
            ax.errorbar(values, y + offset, xerr=spread, color=colour, marker="o" if hollow else "s",
                        markerfacecolor="white" if hollow else colour, linestyle="none", capsize=2,
                        elinewidth=1, label=label)
        ax.set(xlim=(-0.03, 1.03), xlabel=PAPER_FORMATS[measure].label)
        ax.grid(axis="y", alpha=0)
    axes[0].set_yticks(y, table4["relation"])
    axes[0].set_ylabel("Relation")
    axes[0].legend(loc="upper center", bbox_to_anchor=(1.0, -0.22), ncols=2, frameon=False)
    base = study.MR_NAMES["none"]
    changed = paper.drop(index=base, errors="ignore")
    ours = (PROSE("table4.figure.every_relation", rbo=pages.fmt(table4["rbo"].min(), 2))
            if pages.fmt(table4["rbo"].min(), 2) == pages.fmt(table4["rbo"].max(), 2)
            else pages.span(table4["rbo"].min(), table4["rbo"].max()))
    figures.glue_figure("fig-metamorphic-relations", fig,
                        PROSE("table4.figure", paper_base_rbo=pages.fmt(paper.loc[base, "rbo"], 2),
                              paper_relation_rbo=pages.span(changed["rbo"].min(), changed["rbo"].max()), ours=ours))


def kendall_variants(table2: pd.DataFrame, table3: pd.DataFrame, table4: pd.DataFrame) -> pd.DataFrame:
    """The two readings of Kendall's τ (union and shared items) of every row of Tables 2 to 4."""
    columns = ["table", "condition", "kendall_tau", "kendall_tau_shared"]
    return pd.concat([
        table2.assign(table="Table 2")[columns],
        table3.assign(table="Table 3")[columns],
        table4.assign(table="Table 4").rename(columns={"relation": "condition"})[columns],
    ], ignore_index=True)


def show_kendall_variants(table2: pd.DataFrame, table3: pd.DataFrame, table4: pd.DataFrame, notebook: str):
    """The two readings of Kendall's τ side by side (a collapsed table); saves them."""
    tau_pairs = save_table(kendall_variants(table2, table3, table4), notebook, "kendall_variants")
    return format_table(tau_pairs, {"kendall_tau": number(3, label="τ-b, union (absent tied last)"),
                                    "kendall_tau_shared": number(3, label="τ-b, shared items")},
                        caption=PROSE("kendall_variants.caption"),
                        full_table=(notebook, "kendall_variants"), audit=True)


# ----------------------------------------------------------------------------------------------------------------
# RBO of uneven lists and ties; choices the paper does not state


def show_rbo_ties(notebook: str):
    """RBO of a worked example under the three tie treatments (a collapsed table); saves it."""
    x_example, y_example = ["a", ("b", "c"), "d"], ["b", "a", "c", "e", "f"]
    rbo_examples = pd.DataFrame([{"variant": variant,
                                  **rank.rank_biased_overlap(x_example, y_example, p=rank.RBO_PERSISTENCE,
                                                             ties=variant)._asdict()}
                                 for variant in rank.TIE_VARIANTS])
    save_table(rbo_examples, notebook, "rbo_ties_example")
    return format_table(rbo_examples, {"ext": number(3, label="RBO ext"), "min": number(3, label="RBO min"),
                                       "max": number(3, label="RBO max"), "res": number(3, label="Residual")},
                        labels={"variant": "Tie treatment"},
                        caption=PROSE("rbo_ties.caption", persistence=f"{rank.RBO_PERSISTENCE:g}"),
                        full_table=(notebook, "rbo_ties_example"), audit=True)


def choice_sensitivity_by_relation(choices: pd.DataFrame) -> pd.DataFrame:
    """Table 4's means under each unstated choice, one row per measure and choice and one column per relation: the
    five relations a reader compares sit side by side, and the persistence values run down the rows."""
    relations = list(dict.fromkeys(choices["relation"]))
    long = choices.assign(choice=choices["choice"].fillna("as in Table 4"))
    rows = pd.MultiIndex.from_frame(long[["measure", "choice"]].drop_duplicates())
    shown = long.pivot(index=["measure", "choice"], columns="relation", values="mean").reindex(rows)
    return shown.reindex(columns=relations).reset_index().rename_axis(columns=None)


def show_choice_sensitivity(replies: pd.DataFrame, rbo_persistence: Sequence[float], lambdas: Sequence[float],
                            notebook: str):
    """Table 4's means under each unstated choice (a collapsed table); saves them."""
    choices = save_table(study.choice_sensitivity(replies, rbo_persistence, lambdas), notebook, "choice_sensitivity")
    shown = choice_sensitivity_by_relation(choices)
    shown["measure"] = shown["measure"].map(header_label)
    relations = [c for c in shown.columns if c not in ("measure", "choice")]
    return format_table(shown, {c: number(3) for c in relations},
                        labels={"measure": "Measure", "choice": "Choice",
                                **{c: c.replace(": ", ":\n", 1).replace(" (", "\n(", 1) for c in relations}},
                        caption=PROSE("choice_sensitivity.caption"),
                        full_table=(notebook, "choice_sensitivity"), audit=True)


def rbo_order_flips(perturbations: pd.DataFrame) -> tuple[str, str, list[tuple[str, str]]]:
    """The lowest and highest p's RBO columns, and the pairs of changes whose order RBO reverses between them."""
    rbo_columns = [c for c in perturbations.columns if c.startswith("rbo_p")]
    low_p, high_p = rbo_columns[0], rbo_columns[-1]
    by_change = perturbations.set_index("change")
    flips = [(a, b) for i, a in enumerate(by_change.index) for b in by_change.index[i + 1:]
             if np.sign(by_change.loc[a, low_p] - by_change.loc[b, low_p])
             * np.sign(by_change.loc[a, high_p] - by_change.loc[b, high_p]) < 0]
    return low_p, high_p, flips


def show_perturbations(rbo_persistence: Sequence[float], notebook: str) -> Markdown:
    """The measures on constructed changes of a five-item list (a collapsed table, saved), and what the choice of
    p and of τ reading do to them."""
    perturbations = save_table(pd.DataFrame(rank.perturbation_table(5, rbo_persistence)), notebook,
                               "perturbation_sensitivity")
    rbo_columns = [c for c in perturbations.columns if c.startswith("rbo_p")]
    low_p, high_p, flips = rbo_order_flips(perturbations)
    by_change = perturbations.set_index("change")
    display(format_table(perturbations, {"kendall_tau": number(3, label="τ-b, union"),
                                         "kendall_tau_shared": number(3, label="τ-b, shared"),
                                         "overlap": number(3, label="Overlap"),
                                         **{c: number(3, label=f"RBO, p = {c.removeprefix('rbo_p')}")
                                            for c in rbo_columns}},
                         labels={"change": "Change of a five-item list"},
                         caption=PROSE("perturbations.caption"),
                         full_table=(notebook, "perturbation_sensitivity"), audit=True))
    counted = {"low_p": low_p.removeprefix("rbo_p"), "high_p": high_p.removeprefix("rbo_p"), "n_flips": len(flips),
               "n_pairs": len(by_change) * (len(by_change) - 1) // 2}
    if flips:
        first, second = flips[0]
        side = "below" if by_change.loc[first, low_p] < by_change.loc[second, low_p] else "above"
        reversed_order = PROSE("perturbations.flips.example", **counted, first=first, side=side, second=second)
    else:
        reversed_order = PROSE("perturbations.flips", **counted)
    replaced = by_change.loc["new item at rank 1"]
    return Markdown(reversed_order + " " + PROSE("perturbations.readings",
                                                 shared_tau=f"{replaced['kendall_tau_shared']:.3g}",
                                                 union_tau=f"{replaced['kendall_tau']:.3g}"))


# ----------------------------------------------------------------------------------------------------------------
# Lists forced into shape; the reader's recommenders


def show_constrained(replies: pd.DataFrame, shaped_replies: pd.DataFrame | None, notebook: str):
    """The constrained replies' parsing and Tables 2-4 from free and constrained replies (collapsed tables, saved);
    returns both tables, or None when the constrained study was not asked."""
    if shaped_replies is None:
        return None
    shaped_summary = save_table(study.reply_summary(shaped_replies), notebook, "constrained_reply_parsing")
    shaped_effect = save_table(study.shape_effect(replies[~replies["condition"].str.contains("λ")], shaped_replies),
                               notebook, "constrained_tables")
    display(format_table(shaped_summary, PARSING_FORMATS,
                         caption=PROSE("constrained.parsing.caption"),
                         full_table=(notebook, "constrained_reply_parsing"), audit=True))
    display(format_table(shaped_effect, {c: number(3) for c in shaped_effect.columns[2:]},
                         labels={"table": "Table", "condition": "Condition",
                                 "kendall_tau_free": "τ free", "kendall_tau_constrained": "τ constrained",
                                 "rbo_free": "RBO free", "rbo_constrained": "RBO constrained",
                                 "overlap_free": "Overlap free", "overlap_constrained": "Overlap constrained"},
                         caption=PROSE("constrained.tables.caption"), full_table=(notebook, "constrained_tables"),
                         audit=True))
    return shaped_summary, shaped_effect


def show_reader_recommenders(reader_replies: dict[str, pd.DataFrame], iterations: int, notebook: str) -> None:
    """The reader's recommenders: their reply parsing and Table 4 (saved with Tables 2 and 3), or a note that the
    build has none."""
    if not reader_replies:
        display(Markdown(PROSE("readers.none")))
        return

    def keyed(make: Callable[[pd.DataFrame], pd.DataFrame]) -> pd.DataFrame:
        frames = [make(r) for r in reader_replies.values()]
        for label, frame in zip(reader_replies, frames):
            frame.insert(0, "recommender", label)
        return pd.concat(frames, ignore_index=True)

    reader_parsing = save_table(keyed(study.reply_summary), notebook, "reader_reply_parsing")
    save_table(keyed(study.table_2), notebook, "reader_table2_k")
    save_table(keyed(study.table_3), notebook, "reader_table3_l")
    reader_t4 = save_table(keyed(lambda r: study.table_4(r)[0]), notebook, "reader_table4_relations")
    display(format_table(reader_parsing, PARSING_FORMATS, labels={"recommender": "Recommender"},
                         caption=PROSE("readers.parsing.caption"),
                         full_table=(notebook, "reader_reply_parsing"), audit=True))
    display(format_table(reader_t4[["recommender", "relation", *SIMILARITIES]], PAPER_FORMATS,
                         labels={"recommender": "Recommender", "relation": "Relation"},
                         caption=PROSE("readers.table4.caption", iterations=iterations),
                         full_table=(notebook, "reader_table4_relations")))


# ----------------------------------------------------------------------------------------------------------------
# The findings glued into the verdict's details


def _reference(replies: pd.DataFrame) -> pd.DataFrame:
    """The reference replies of Tables 3 and 4: iteration 0 of l = 20."""
    return replies[(replies["table"] == "3") & (replies["condition"] == "l=20") & (replies["iteration"] == 0)]


def findings(replies: pd.DataFrame, table4: pd.DataFrame, users: Sequence) -> dict:
    """Every value the verdict's details glue as text, by name. The model counts as answering with lists when at
    least :data:`recjudge.metamorphic.study.LIST_SHARE_NEEDED` of its replies are lists."""
    baseline = study.MR_NAMES["none"]
    relations_only = table4[table4["relation"] != baseline]
    base_rbo = table4.loc[table4["relation"] == baseline, "rbo"].iloc[0]
    lists = int(replies["is_list"].sum())
    reference = _reference(replies)
    paper_t4 = study.PAPER_TABLE_4.set_index("relation")["rbo"]
    list_share = lists / len(replies)
    recommends = list_share >= study.LIST_SHARE_NEEDED
    return {
        "n_replies": f"{len(replies):,}", "users": pages.count(len(users), "user"),
        "list_finding": PROSE("list_finding.lists" if recommends else "list_finding.not_a_recommender"),
        "n_lists": f"{lists:,}", "list_share": pages.fmt(100 * list_share, 0),
        "list_share_needed": pages.fmt(100 * study.LIST_SHARE_NEEDED, 0),
        "reference_lists": int(reference["is_list"].sum()), "reference_users": pages.count(len(reference), "user"),
        "base_rbo": pages.fmt(base_rbo, 2),
        "relation_rbo": pages.span(relations_only["rbo"].min(), relations_only["rbo"].max()),
        "paper_relation_rbo": pages.span(paper_t4.drop(index=baseline).min(), paper_t4.drop(index=baseline).max()),
        "paper_base_rbo": pages.fmt(paper_t4.loc[baseline], 2),
        "paper_max_sd": pages.fmt(study.PAPER_TABLE_4.filter(like="_sd").max().max(), 3),
    }


def shaped_finding(shaped_replies: pd.DataFrame | None, shaped_tables, users: Sequence) -> str:
    """What the constrained replies show (empty when they were not asked): how many are lists, how many titles
    match, and Table 4's mean RBO without and under the relations."""
    if shaped_tables is None:
        return ""
    shaped_summary, shaped_effect = shaped_tables
    shaped_lists = int(shaped_summary["replies"].sum() - shaped_summary["not_a_list"].sum())
    shaped_reference_lists = int(_reference(shaped_replies)["is_list"].sum())
    shaped_t4 = shaped_effect[(shaped_effect["table"] == "Table 4")].set_index("condition")
    shaped_base = shaped_t4.loc[study.MR_NAMES["none"], "rbo_constrained"]
    shaped_mrs = shaped_t4.drop(index=study.MR_NAMES["none"])["rbo_constrained"]
    aside = [PROSE("shaped_finding.out_of_shape")]
    if shaped_summary["matched_share"].notna().any():
        aside.insert(0, PROSE("shaped_finding.titles_matched",
                              matched=pages.percent(100 * shaped_summary["matched_share"].mean(), 0)))
    return PROSE("shaped_finding", n_lists=f"{shaped_lists:,}", n_replies=f"{int(shaped_summary['replies'].sum()):,}",
                 aside="; ".join(aside), reference_lists=shaped_reference_lists,
                 users=pages.count(len(users), "user"), base_rbo=pages.fmt(shaped_base, 2),
                 relation_rbo=pages.span(shaped_mrs.min(), shaped_mrs.max()))


def glue_findings(replies: pd.DataFrame, table4: pd.DataFrame, users: Sequence,
                  shaped_replies: pd.DataFrame | None, shaped_tables) -> None:
    """Glue the verdict's details: the text values and the constrained replies' finding (as Markdown)."""
    from myst_nb import glue

    pages.glue_text(findings(replies, table4, users))
    glue("shaped_finding", Markdown(shaped_finding(shaped_replies, shaped_tables, users)), display=False)

