"""The page of the metamorphic-testing chapter: the rules that choose its words and its tables, on small frames."""

import pandas as pd
import pytest

from recjudge.chapters import metamorphic_recommender as page
from recjudge.metamorphic import study

NONE = study.MR_NAMES["none"]


pytestmark = pytest.mark.usefixtures("page_results")


def replies(n_lists: int, n: int = 10) -> pd.DataFrame:
    """``n`` replies of which the first ``n_lists`` are lists; the first is the reference reply of Tables 3 and 4."""
    return pd.DataFrame({"table": ["3"] * n, "condition": ["l=20"] * n, "iteration": range(n),
                         "is_list": [i < n_lists for i in range(n)]})


def table4(base_rbo: float = 0.4) -> pd.DataFrame:
    return pd.DataFrame({"relation": [NONE, study.MR_NAMES["mr1"], study.MR_NAMES["mr3"]],
                         "rbo": [base_rbo, 0.2, 0.3]})


def test_the_model_recommends_only_when_nine_replies_in_ten_are_lists():
    assert study.LIST_SHARE_NEEDED == 0.9
    enough = page.findings(replies(9), table4(), users=[1])
    assert enough["list_finding"] == "The model answers with lists."
    assert (enough["n_lists"], enough["list_share"], enough["list_share_needed"]) == ("9", "90", "90")
    too_few = page.findings(replies(8), table4(), users=[1])
    assert too_few["list_finding"] == "The tiny model is not a recommender."


def test_the_findings_read_the_reference_reply_and_the_relations_rbo():
    values = page.findings(replies(1), table4(0.4), users=[1, 2])
    assert values["users"] == "2 users" and values["n_replies"] == "10"
    assert values["reference_lists"] == 1 and values["reference_users"] == "1 user"
    assert values["base_rbo"] == "0.40" and values["relation_rbo"] == "0.20–0.30"
    paper_rbo = study.PAPER_TABLE_4.set_index("relation")["rbo"]
    assert values["paper_base_rbo"] == f"{paper_rbo.loc[NONE]:.2f}"


def shaped(base_rbo: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    summary = pd.DataFrame({"replies": [4, 6], "not_a_list": [1, 0], "matched_share": [0.5, 0.7]})
    effect = pd.DataFrame({"table": ["Table 4"] * 3, "condition": [NONE, "MR1: Multiply", "MR2: Addition"],
                           "rbo_constrained": [base_rbo, 0.1, 0.3]})
    return summary, effect


def test_the_constrained_finding_is_empty_without_the_constrained_replies_and_counts_them_with():
    assert page.shaped_finding(None, None, users=[1]) == ""
    text = page.shaped_finding(replies(1, n=3), shaped(0.5), users=[1])
    assert text.startswith("**Constrained to a list, the model answers with one in 9 of 10 replies** (60% of")
    assert "the reference reply is a list for 1 of 1 user, so Table 4's mean RBO is 0.50 without a change and " \
           "0.10–0.30 under the relations." in text


def test_rbo_order_flips_finds_the_pairs_of_changes_whose_order_depends_on_p():
    perturbations = pd.DataFrame({"change": ["a", "b", "c"], "kendall_tau": [0.0] * 3,
                                  "rbo_p0.5": [0.9, 0.5, 0.1], "rbo_p0.9": [0.4, 0.6, 0.2]})
    low, high, flips = page.rbo_order_flips(perturbations)
    assert (low, high) == ("rbo_p0.5", "rbo_p0.9")
    assert flips == [("a", "b")]


def test_the_two_kendall_readings_stack_tables_2_to_4():
    def table(key, value):
        return pd.DataFrame({key: [value], "kendall_tau": [0.1], "kendall_tau_shared": [0.2], "rbo": [0.3]})

    stacked = page.kendall_variants(table("condition", "k=5"), table("condition", "l=5"), table("relation", NONE))
    assert list(stacked.columns) == ["table", "condition", "kendall_tau", "kendall_tau_shared"]
    assert stacked["table"].tolist() == ["Table 2", "Table 3", "Table 4"]
    assert stacked["condition"].tolist() == ["k=5", "l=5", NONE]


def test_table2_is_shown_beside_the_paper_with_its_caption_and_saved(page_results):
    ours = pd.DataFrame({"condition": ["k=5", "k=10"], "kendall_tau": [0.1, 0.2], "kendall_tau_shared": [0.1, 0.2],
                         "rbo": [0.3, 0.4], "overlap": [0.5, 0.6]})
    table = page.show_table2(ours, "chapter")
    assert table.caption.startswith("Table 2: similarity of two iterations per k")
    assert table.full_table == "results/chapter/table2_k.csv"
    assert list(table.data.columns) == [("k", ""), *[(name, side) for name in ("Kendall τ", "RBO", "Overlap ratio")
                                                     for side in ("paper", "ours")]]
    assert len(table.data) == 4  # the paper's four k, ours beside two of them
    pd.testing.assert_frame_equal(pd.read_csv(page_results / "chapter" / "table2_k.csv"), ours)


def test_the_relations_change_the_ratings_or_the_liked_items_of_the_prompt():
    prompt = (f"Recommend movies.{study.HISTORY_START}Heat (1995) 4/5, Alien (1979) 5/5"
              f"{study.HISTORY_END} Answer with a list.")
    examples = dict(page.relation_examples(prompt))
    assert list(examples) == ["MR1: Multiply", "MR2: Addition", "MR3: Spaces", "MR4: Random words"]
    assert "Heat (1995) 8/10, Alien (1979) 10/10" in examples["MR1: Multiply"]  # λ = 2
    assert "Heat (1995) 6/7, Alien (1979) 7/7" in examples["MR2: Addition"]
    assert "H e a t ( 1 9 9 5 ) 4 / 5" in examples["MR3: Spaces"]
    for name in ("MR3: Spaces", "MR4: Random words"):  # only the liked items change
        assert examples[name].startswith(f"Recommend movies.{study.HISTORY_START}")
        assert examples[name].endswith(f"{study.HISTORY_END} Answer with a list.") and examples[name] != prompt


def test_the_choice_sensitivity_table_puts_the_relations_side_by_side_and_the_choices_down_the_rows():
    choices = pd.DataFrame({"relation": [NONE, "MR1: Multiply", NONE, "MR1: Multiply", "MR1: Multiply"],
                            "choice": ["p = 0.5", "p = 0.5", "p = 0.9", "p = 0.9", "λ = 2"],
                            "measure": ["rbo", "rbo", "rbo", "rbo", "overlap"], "mean": [0.1, 0.2, 0.3, 0.4, 0.5]})
    shown = page.choice_sensitivity_by_relation(choices)
    assert list(shown.columns) == ["measure", "choice", NONE, "MR1: Multiply"]
    assert shown[["measure", "choice"]].values.tolist() == [["rbo", "p = 0.5"], ["rbo", "p = 0.9"],
                                                            ["overlap", "λ = 2"]]
    assert shown[NONE].tolist()[:2] == [0.1, 0.3] and pd.isna(shown[NONE].iloc[2])


def test_table4_is_drawn_beside_the_papers_relation_by_relation_with_the_spread_over_iterations(monkeypatch):
    import numpy as np

    drawn = {}
    monkeypatch.setattr(page.figures, "glue_figure",
                        lambda name, fig, caption: drawn.update(name=name, fig=fig, caption=caption))
    relations = list(study.PAPER_TABLE_4["relation"])
    ours = pd.DataFrame({"relation": relations, "rbo": [0.5, 0.1, 0.2, 0.3, 0.4],
                         "rbo_sd": [0.05] * 5, "overlap": [0.4, 0.0, 0.1, 0.2, 0.3], "overlap_sd": [0.02] * 5})
    page.draw_table4(ours)
    assert drawn["name"] == "fig-metamorphic-relations"
    rbo, overlap = drawn["fig"].axes
    assert [t.get_text() for t in rbo.get_yticklabels()] == relations  # top to bottom as in the table
    bars = {container.get_label(): container for container in rbo.containers}
    paper_points = np.asarray(bars["paper (GPT-3.5-turbo)"].lines[0].get_xdata(), dtype=float)
    np.testing.assert_allclose(sorted(paper_points), sorted(study.PAPER_TABLE_4["rbo"]))
    assert "SmolLM2-135M" in " ".join(bars) and page.figures.check_figure(drawn["fig"]) == []
    assert "0.98" in drawn["caption"]  # the paper's RBO without a change, read from its table
