"""The randomness-control and metamorphic-relation study of Khirbat et al. (2024), section 4, as one request plan.

``plan`` lists every reply the study needs, one row per (condition, user, iteration) with the request and the
judge configuration that asks it; ``ask`` runs the plan through the judge engine (``recjudge.llm.run_judge``; replay
from the store in the book) and returns the ranked list of each reply; ``similarities`` compares lists as the
paper does and ``table_2`` / ``table_3`` / ``table_4`` summarise them.

Design (the paper's, with our reading where it is silent):

- Table 2: k in {5, 10, 30, 50}, all the user's liked items (rating > 3) in the prompt, two iterations per user;
  the two lists of each user compared.
- Table 3: l in {5, 10, 20, 30}, k = 5; iteration 0 is the reference and iterations 1..n (n = 10) are each compared
  with it; the mean over users of each iteration, then the mean over iterations.
- Table 4: k = 5, l = 20; the baseline is iteration 0 of the unchanged prompt; "No change" is iterations 1..n of the
  unchanged prompt (so it equals Table 3's l = 20 row, as in the paper), each MR is n iterations of the changed
  prompt, all compared with the baseline; mean and SD over the n iteration means, and an unpaired t-test
  (``scipy.stats.ttest_ind``) of each MR's iteration means against No change's.
- Iterations at temperature > 0 are sample indices of the judge engine (distinct store entries), so the whole study
  replays. MR4 draws its words with the iteration as seed, so its iterations are distinct prompts (sample 0 each).
- MR1 and MR2 use λ = 2; MR3 and MR4 change the liked-items part of the prompt (its "user history and rating").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import pandas as pd
from scipy import stats

from recjudge import papers
from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
from recjudge.llm.judge_spec import judge_configs, role_of
from recjudge.prompts.output_shapes import output_shape

from .rank import RBO_PERSISTENCE, similarity_row
from .recommender import TitleMatcher, liked_history, list_length, parse_titles, ranking_of, recommendation_request
from .relations import apply_to_span, mr1_multiply, mr2_shift, mr3_spaces, mr4_random_words

K_VALUES = (5, 10, 30, 50)
L_VALUES = (5, 10, 20, 30)
MR_NAMES = {"none": "No change (baseline)", "mr1": "MR1: Multiply", "mr2": "MR2: Addition", "mr3": "MR3: Spaces",
            "mr4": "MR4: Random words"}
HISTORY_START, HISTORY_END = "likes the following items: ", ". (1 being lowest"
METRICS = ("kendall_tau", "kendall_tau_shared", "rbo", "overlap")


def max_tokens_for(k: int, constrained: bool = False) -> int:
    """Reply length limit for k titles: 12 tokens a title (title, year, numbering) plus 20; a constrained reply
    (JSON, titles up to ``shapes.MAX_TITLE_CHARS`` characters) gets 32 a title, so that it can close its list."""
    return (32 if constrained else 12) * int(k) + 20


def recommender_config(k: int, model: str = "smollm2-135m-instruct-q4_1", provider: str = "local",
                       temperature: float = 0.7, runs: int = 1, constrained: bool = False) -> JudgeConfig:
    """The recommender asked for k items; ``constrained``: its reply forced into a JSON list of exactly k titles
    (``recjudge.prompts.output_shapes``), beside the paper's free reply, never instead of it."""
    config = JudgeConfig(provider=provider, model=model, prompt="khirbat_recommend", temperature=temperature,
                         runs=runs, max_tokens=max_tokens_for(k, constrained))
    return config.constrained(output_shape("khirbat_recommend", k=k)) if constrained else config


def eligible_users(ratings: pd.DataFrame, min_liked: int = 30, max_liked: int = 40) -> list:
    """Users with between ``min_liked`` and ``max_liked`` ratings above 3 (enough for l = 30; Table 2 puts all of
    them into the prompt, so the upper bound keeps that prompt short), sorted."""
    liked = ratings[ratings["rating"] > 3].groupby("user_id").size()
    return sorted(liked[(liked >= min_liked) & (liked <= max_liked)].index.tolist())


def sample_users(ratings: pd.DataFrame, n_users: int, seed: int = 0, **bounds) -> list:
    users = eligible_users(ratings, **bounds)
    if n_users > len(users):
        raise ValueError(f"asked for {n_users} users, only {len(users)} are eligible")
    rng = np.random.default_rng(seed)
    return sorted(rng.choice(np.array(users), size=n_users, replace=False).tolist())


def _relation(name: str, iteration: int) -> Callable[[str], str]:
    if name == "mr1":
        return mr1_multiply
    if name == "mr2":
        return mr2_shift
    if name == "mr3":
        return partial(apply_to_span, start=HISTORY_START, end=HISTORY_END, relation=mr3_spaces)
    if name == "mr4":
        return partial(apply_to_span, start=HISTORY_START, end=HISTORY_END,
                       relation=partial(mr4_random_words, seed=iteration))
    raise ValueError(f"unknown relation {name!r}; known: mr1, mr2, mr3, mr4")


def _changed(request: JudgeRequest, relation: Callable[[str], str], key: str, **meta) -> JudgeRequest:
    messages = [dict(m) for m in request.messages]
    messages[-1]["content"] = relation(messages[-1]["content"])
    return JudgeRequest(key=key, messages=messages, meta={**request.meta, **meta})


@dataclass(frozen=True)
class PlanGroup:
    """Requests asked with one configuration: ``runs`` samples each (iterations = sample indices)."""

    table: str
    condition: str
    config: JudgeConfig
    requests: list[JudgeRequest]


def plan(ratings: pd.DataFrame, items: pd.DataFrame, users: Sequence, iterations: int = 10,
         model: str = "smollm2-135m-instruct-q4_1", provider: str = "local", temperature: float = 0.7,
         tables: Sequence[str] = ("2", "3", "4"), lambdas: Sequence[int] = (), constrained: bool = False
         ) -> list[PlanGroup]:
    """Every request of the study for ``users`` (see the module docstring); ``lambdas``: MR1 and MR2 again with
    these λ besides the paper's 2 (Table 4 conditions "mr1:λ=5", "mr2:λ=5"); ``constrained``: every reply forced
    into a list of exactly k titles (``recommender_config``)."""
    groups: list[PlanGroup] = []
    cfg = partial(recommender_config, model=model, provider=provider, temperature=temperature,
                  constrained=constrained)
    if "2" in tables:
        for k in K_VALUES:
            reqs = [recommendation_request(f"t2:k{k}:{u}", u, liked_history(ratings, items, u, None), k,
                                           table="2", condition=f"k={k}") for u in users]
            groups.append(PlanGroup("2", f"k={k}", cfg(k, runs=2), reqs))
    if "3" in tables or "4" in tables:
        for l in L_VALUES if "3" in tables else (20,):  # noqa: E741 (Khirbat et al.'s l)
            reqs = [recommendation_request(f"t3:l{l}:{u}", u, liked_history(ratings, items, u, l), 5,
                                           table="3", condition=f"l={l}") for u in users]
            groups.append(PlanGroup("3", f"l={l}", cfg(5, runs=iterations + 1), reqs))
    if "4" in tables:
        base = {u: recommendation_request(f"t3:l20:{u}", u, liked_history(ratings, items, u, 20), 5) for u in users}
        for name in ("mr1", "mr2", "mr3"):
            reqs = [_changed(base[u], _relation(name, 0), f"t4:{name}:{u}", table="4", condition=name) for u in users]
            groups.append(PlanGroup("4", name, cfg(5, runs=iterations), reqs))
        reqs = [_changed(base[u], _relation("mr4", i), f"t4:mr4:{u}:{i}", table="4", condition="mr4", iteration=i)
                for u in users for i in range(iterations)]
        groups.append(PlanGroup("4", "mr4", cfg(5, runs=1), reqs))
        for lam in (lam for lam in lambdas if lam != 2):  # λ = 2 is Table 4's own MR1 and MR2
            for name, relation in (("mr1", mr1_multiply), ("mr2", mr2_shift)):
                condition = f"{name}:λ={lam}"
                reqs = [_changed(base[u], partial(relation, lam=lam), f"t4:{condition}:{u}", table="4",
                                 condition=condition) for u in users]
                groups.append(PlanGroup("4", condition, cfg(5, runs=iterations), reqs))
    return groups


def for_judges(groups: Sequence[PlanGroup], judges: Sequence[dict]) -> dict[str, list[PlanGroup]]:
    """The same plan asked of each reader's judge (``judges``: a chapter's ``judges`` parameter, ``JudgeSpec.
    to_parameter()`` dicts), keyed by the judge's label: every group keeps its requests and its role (prompt, reply
    length, runs, temperature, output shape) with the judge as the recommender (``judge_spec.judge_configs``; a
    temperature or seed the judge sets wins).  No judges, no plans."""
    plans: dict[str, list[PlanGroup]] = {}
    for group in groups:
        for label, config in judge_configs(judges, **role_of(group.config)):
            plans.setdefault(label, []).append(replace(group, config=config))
    return plans


def n_replies(groups: Sequence[PlanGroup]) -> int:
    return sum(len(g.requests) * g.config.runs for g in groups)


def ask(groups: Sequence[PlanGroup], items: pd.DataFrame, matcher: TitleMatcher | None = None,
        mode: str | None = None, store=None, progress: bool = False) -> pd.DataFrame:
    """One row per reply: table, condition, user_id, iteration, k, reply, is_list, n_titles, ranking."""
    matcher = matcher or TitleMatcher(items)
    rows = []
    for group in groups:
        run = run_judge(group.config, group.requests, parser=list_length, mode=mode, store=store, progress=progress)
        meta = {r.key: r.meta for r in group.requests}
        for rec in run.table.itertuples(index=False):
            m = meta[rec.key]
            k = int(m["k"])
            iteration = int(m.get("iteration", rec.run))
            reply = rec.reply if isinstance(rec.reply, str) else None
            parsed = parse_titles(reply)
            rows.append({"table": group.table, "condition": group.condition, "user_id": m["user_id"],
                         "iteration": iteration, "k": k, "l": int(m["l"]), "reply": reply,
                         "is_list": parsed.is_list, "n_titles": len(parsed.titles),
                         "ranking": ranking_of(reply, matcher, k)})
    return pd.DataFrame(rows)


def _compare(a: Sequence, b: Sequence, p: float = RBO_PERSISTENCE) -> dict[str, float]:
    return similarity_row(list(a), list(b), p=p)


def table_2(replies: pd.DataFrame) -> pd.DataFrame:
    """Per k: mean similarity of the two iterations' lists over users (and the users compared)."""
    out = []
    for condition, group in replies[replies["table"] == "2"].groupby("condition", sort=False):
        sims = []
        for _, user in group.groupby("user_id"):
            lists = user.sort_values("iteration")["ranking"].tolist()
            if len(lists) >= 2:
                sims.append(_compare(lists[0], lists[1]))
        frame = pd.DataFrame(sims, columns=list(METRICS))
        out.append({"condition": condition, **frame.mean().to_dict(), "users": len(sims)})
    return pd.DataFrame(out)


def iteration_means(replies: pd.DataFrame, reference: pd.DataFrame, compared: pd.DataFrame,
                    p: float = RBO_PERSISTENCE) -> pd.DataFrame:
    """Per iteration: the mean over users of the similarity of that iteration's list to the user's reference list
    (RBO with persistence ``p``)."""
    ref = {u: r for u, r in zip(reference["user_id"], reference["ranking"])}
    rows = []
    for it, group in compared.groupby("iteration"):
        sims = pd.DataFrame([_compare(ref[u], r, p) for u, r in zip(group["user_id"], group["ranking"]) if u in ref],
                            columns=list(METRICS))
        rows.append({"iteration": it, **sims.mean().to_dict(), "users": len(sims)})
    return pd.DataFrame(rows)


def table_3(replies: pd.DataFrame) -> pd.DataFrame:
    out = []
    t3 = replies[replies["table"] == "3"]
    for condition, group in t3.groupby("condition", sort=False):
        means = iteration_means(group, group[group["iteration"] == 0], group[group["iteration"] > 0])
        out.append({"condition": condition, **means[list(METRICS)].mean().to_dict(), "iterations": len(means)})
    return pd.DataFrame(out)


def table_4(replies: pd.DataFrame, p: float = RBO_PERSISTENCE,
            conditions: Sequence[str] = ("mr1", "mr2", "mr3", "mr4")) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary: mean and SD over iteration means per relation, with t-test p-values; iteration means long).
    ``p``: RBO's persistence; ``conditions``: the Table 4 conditions compared with No change (``plan`` names the
    λ variants "mr1:λ=5")."""
    base = replies[(replies["table"] == "3") & (replies["condition"] == "l=20")]
    reference = base[base["iteration"] == 0]
    per_iteration = {"none": iteration_means(base, reference, base[base["iteration"] > 0], p)}
    t4 = replies[replies["table"] == "4"]
    for name in conditions:
        per_iteration[name] = iteration_means(t4, reference, t4[t4["condition"] == name], p)
    rows = []
    for name, means in per_iteration.items():
        row: dict[str, object] = {"relation": relation_name(name), "iterations": len(means)}
        for metric in METRICS:
            values = means[metric].dropna()
            row[metric] = values.mean()
            row[f"{metric}_sd"] = values.std(ddof=1) if len(values) > 1 else math.nan
            if name != "none":
                baseline = per_iteration["none"][metric].dropna()
                test = stats.ttest_ind(values, baseline) if len(values) > 1 and len(baseline) > 1 else None
                row[f"{metric}_p"] = float(test.pvalue) if test is not None else math.nan
        rows.append(row)
    long = pd.concat([m.assign(relation=relation_name(n)) for n, m in per_iteration.items()], ignore_index=True)
    return pd.DataFrame(rows), long


def reply_summary(replies: pd.DataFrame) -> pd.DataFrame:
    """Per table: replies, replies that are not a list, mean titles per reply, and the ranked entries with the
    share of them matched to a catalogue item (the rest are kept as "?title" text)."""
    rows = []
    for table, group in replies.groupby("table", sort=True):
        entries = [entry for ranking in group["ranking"] for entry in ranking]
        matched = sum(1 for entry in entries if not (isinstance(entry, str) and entry.startswith("?")))
        rows.append({"table": f"Table {table}", "replies": len(group), "not_a_list": int((~group["is_list"]).sum()),
                     "mean_titles": float(group["n_titles"].mean()), "ranked_entries": len(entries),
                     "matched_share": matched / len(entries) if entries else math.nan})
    return pd.DataFrame(rows)


def shape_effect(free: pd.DataFrame, constrained: pd.DataFrame) -> pd.DataFrame:
    """Tables 2-4 (Kendall's τ over the union, RBO at p = 0.9, overlap) from free replies beside the same tables from
    replies constrained to a list of k titles: one row per table and condition (Table 4: the paper's relations)."""
    frames = []
    for label, build in (("Table 2", table_2), ("Table 3", table_3),
                         ("Table 4", lambda r: table_4(r)[0].rename(columns={"relation": "condition"}))):
        a, b = build(free), build(constrained)
        columns = ["condition", "kendall_tau", "rbo", "overlap"]
        frames.append(a[columns].merge(b[columns], on="condition", how="outer", sort=False,
                                       suffixes=("_free", "_constrained")).assign(table=label))
    out = pd.concat(frames, ignore_index=True)
    return out[["table", "condition", *[f"{m}_{s}" for m in ("kendall_tau", "rbo", "overlap")
                                        for s in ("free", "constrained")]]]


def relation_name(condition: str) -> str:
    """"mr1" -> "MR1: Multiply"; a λ variant "mr1:λ=5" -> "MR1: Multiply (λ = 5)"."""
    name, _, lam = condition.partition(":λ=")
    return MR_NAMES[name] + (f" (λ = {lam})" if lam else "")


def choice_sensitivity(replies: pd.DataFrame, p_values: Sequence[float] = (0.5, 0.8, 0.9, 0.95, 0.98),
                       lambdas: Sequence[int] = ()) -> pd.DataFrame:
    """Table 4's means under the choices the paper does not state: RBO's persistence p (one row per p), both
    readings of Kendall's τ, and MR1/MR2's λ (rows for the λ variants the replies hold; λ = 2 is Table 4's).
    Long: relation, choice, value, measure, mean over iteration means."""
    rows = []
    for p in p_values:
        table, _ = table_4(replies, p=p)
        rows += [{"relation": r, "choice": f"p = {p:g}", "measure": "rbo", "mean": v}
                 for r, v in zip(table["relation"], table["rbo"])]
    table, _ = table_4(replies)  # its rows: No change, then MR1-MR4
    choices = ["", "λ = 2", "λ = 2", "", ""]
    for measure in ("kendall_tau", "kendall_tau_shared", "overlap"):
        rows += [{"relation": r, "choice": c, "measure": measure, "mean": v}
                 for r, c, v in zip(table["relation"], choices, table[measure])]
    variants = [f"{name}:λ={lam}" for lam in lambdas for name in ("mr1", "mr2")]
    present = [c for c in variants if (replies["condition"] == c).any()]
    if present:
        table, _ = table_4(replies, conditions=present)  # its rows: No change, then the variants in order
        for measure in ("kendall_tau", "kendall_tau_shared", "rbo", "overlap"):
            for condition, value in zip(present, table[measure].iloc[1:]):
                name, _, lam = condition.partition(":λ=")
                rows.append({"relation": MR_NAMES[name], "choice": f"λ = {lam}", "measure": measure, "mean": value})
    return pd.DataFrame(rows)


__all__ = ["HISTORY_END", "HISTORY_START", "K_VALUES", "L_VALUES", "METRICS", "MR_NAMES", "PlanGroup", "ask",
           "choice_sensitivity", "eligible_users", "iteration_means", "max_tokens_for", "n_replies", "plan",
           "recommender_config", "relation_name", "sample_users", "table_2", "table_3", "table_4"]


#: Khirbat et al. (2024) Tables 2-4, numbers as printed (GPT-3.5-turbo, ml-latest-small read as "MovieLens 100k";
#: ``recjudge.papers``).
#: A model that answers with a ranked list in fewer of its replies than this share is not yet a recommender whose
#: lists a relation can move (the paper's GPT-3.5-turbo answered with lists throughout).
LIST_SHARE_NEEDED = 0.9
PAPER_TABLE_2 = papers.table("khirbat2024metamorphic_table2")
PAPER_TABLE_3 = papers.table("khirbat2024metamorphic_table3")
PAPER_TABLE_4 = papers.table("khirbat2024metamorphic_table4")
