"""A planted judge: its name, the parameters its planted value sets (solved from the key's populations), and its
answers to prompts read by :mod:`recjudge.planted.reading`, one at a time (the server) or many at once (the
in-process simulation), by the same function.

A planted judge is asked by name, ``planted-<value>-<seed>[-<member>]`` (:class:`PlantedName`): the value
(``null``, ``paper`` or a number: :func:`recjudge.planted.effects.planted_scale`), the seed of its noise, and, for an
average of several judges, which member it is (``a``, the default, then ``b``, ``c``, ...). Judges that differ only
by member share the part ``q`` of their noise that every judge shares (:mod:`recjudge.planted.model`).

What it answers, per prompt family (the effects: :mod:`recjudge.planted.effects`):

- Kang et al.'s prompts about a Serendipity-2018 answer: an integer whose correlation with the users' truth is SOG's
  times (1 + the paper's gain), plus the paper's gain in points when the prompt carries auxiliary data; as one reply
  token with its log-probability (the chapters read an expected score over the tokens 1–5: here exactly the integer).
  Members other than ``a`` of a null judge are weaker, so that the average of three gains nothing over ``a``.
- Tokutake et al.'s prompts: an integer against g with each prompt's MAE and three-class accuracy (``Serendipity:
  k``; least-to-most's first two steps ``Relevance: k`` and ``Unexpectedness: k``).
- Kang et al.'s basic prompt about a pair of the re-evaluation's lists: an integer whose mean is the planted level of
  the recommenders whose top 20 hold the item (their mean when several do).
- Zhang et al.'s prompts: one integer per aspect, correlating with the users' rating of that aspect as ROUGE-1-F does
  plus the paper's lead (a JSON object for the four aspects; ``Aspect: k`` for one).
- Anything else (a rewritten prompt, a recommender's prompt): ``3``, counted as unread (:attr:`Answer.read`).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize

from recjudge.planted import effects
from recjudge.planted.key import Found, PlantedKey
from recjudge.planted.model import (
    Noise,
    answers_of,
    ensemble_pearson,
    solve_bias,
    solve_errors,
    solve_mean,
    solve_rho,
    text_hash,
)
from recjudge.planted.reading import UNKNOWN, Reading

#: How a planted judge is asked: ``planted-<value>-<seed>[-<member>]``.
NAME_PATTERN = re.compile(r"^planted-(null|paper|\d+(?:\.\d+)?)-(\d+)(?:-([a-z]))?$")
#: The members of an average: ``a`` is the judge every other claim reads; Kang et al. average three judges.
MEMBERS = ("a", "b", "c")
#: Kang et al.'s serendipity templates (a reader's judge reads them as one reply token).
KANG_TEMPLATES = ("kang_basic", "kang_fewshot", "kang_fewshot_aux", "kang_llm4seren", "kang_serenprompt_1",
                  "kang_serenprompt_2")
#: Tokutake et al.'s templates -> their strategy and the step they ask (what the reply is labelled).
TOKUTAKE_TEMPLATES = {"tokutake_base": ("base", "Serendipity"), "tokutake_ls": ("ls", "Serendipity"),
                      "tokutake_cot": ("cot", "Serendipity"), "tokutake_ltm": ("ltm", "Relevance"),
                      "tokutake_ltm_step2": ("ltm", "Unexpectedness"), "tokutake_ltm_step3": ("ltm", "Serendipity")}
#: Zhang et al.'s (reconstructed) templates, each asking four aspects or one.
ZHANG_MULTI = ("zhang_multi_zero_shot", "zhang_multi_one_shot", "zhang_multi_personalised")
ZHANG_SINGLE = ("zhang_single_zero_shot", "zhang_single_one_shot", "zhang_single_personalised")
#: The answer to a prompt a planted judge cannot read.
UNREAD_ANSWER = 3
AUXILIARY_TEMPLATE = "kang_fewshot_aux"


@dataclass(frozen=True)
class PlantedName:
    """``planted-<value>-<seed>[-<member>]``: the planted value, the seed of the judge's noise, its member."""

    value: str
    seed: int
    member: str = "a"

    @classmethod
    def parse(cls, name: str) -> PlantedName | None:
        """The name's parts, or None when it is no planted judge's name."""
        match = NAME_PATTERN.match(str(name))
        return None if match is None else cls(match.group(1), int(match.group(2)), match.group(3) or "a")

    def __str__(self) -> str:
        return f"planted-{self.value}-{self.seed}" + ("" if self.member == "a" else f"-{self.member}")


@dataclass(frozen=True)
class Answer:
    """A planted judge's reply: its text, the integers it holds (one per aspect for a four-aspect prompt) and
    whether the prompt was read (False: :data:`UNREAD_ANSWER`)."""

    text: str
    scores: tuple[int, ...]
    read: bool = True


def aspect_of_title(title: str) -> str:
    """"Persuasiveness" -> "persuasiveness" (Zhang et al.'s single-aspect prompts name the aspect in its title)."""
    return str(title).strip().lower()


class PlantedJudge:
    """The parameters of one planted value, solved from ``key``'s populations on first use."""

    def __init__(self, key: PlantedKey, value: str):
        self.key, self.value = key, value
        self.scale = effects.planted_scale(value)

    # ------------------------------------------------------------------------------------- Kang et al.'s prompts
    @functools.cached_property
    def kang(self) -> dict[str, float]:
        """Latent ρ of the plain prompts and of those with auxiliary data (``plain``, ``auxiliary``), of the members
        other than ``a`` (``member``), and the noise ``q`` every judge shares; with the correlations they give
        (``r_plain``, ``r_auxiliary``, and the three-judge average's ``r_average`` beside member ``a``'s
        ``r_single``, both by the Monte Carlo integral)."""
        truths = self.key.serendipity
        truth, driver = truths.answers["truth"].to_numpy(dtype=float), truths.driver["truth"]
        thresholds = truths.kang_thresholds
        r_plain = truths.sog_pearson * (1 + self.scale * effects.kang_zero_shot_gain())
        r_auxiliary = r_plain + self.scale * effects.kang_auxiliary_gain()
        plain = solve_rho(truth, r_plain, thresholds, clamp=self.scale > 1, driver=driver)

        def gain(q: float, member: float) -> tuple[float, float]:
            average, each = ensemble_pearson(truth, [plain, member, member], q, thresholds, driver=driver)
            return average, each[0]

        def shared_for(ratio: float) -> float:
            def miss(q: float) -> float:
                average, single = gain(q, plain)
                return average / single - ratio
            if miss(0.0) <= 0:  # even independent judges gain less: the largest gain there is
                return 0.0
            return float(optimize.brentq(miss, 0.0, 0.999, xtol=1e-6))

        if self.scale > 0:
            q = shared_for(1 + self.scale * (effects.kang_ensemble_ratio() - 1))
            member = plain
        else:
            q = shared_for(effects.kang_ensemble_ratio())
            member = float(optimize.brentq(lambda m: (lambda pair: pair[0] - pair[1])(gain(q, m)), 0.0, plain,
                                           xtol=1e-6))
        average, single = gain(q, member)
        return {"plain": plain, "auxiliary": solve_rho(truth, r_auxiliary, thresholds, clamp=self.scale > 1,
                                                       driver=driver),
                "member": member, "q": q,
                "r_plain": r_plain, "r_auxiliary": r_auxiliary, "r_average": average, "r_single": single}

    @property
    def noise(self) -> Noise:
        return Noise(q=self.kang["q"])

    def kang_rho(self, member: str, auxiliary: np.ndarray) -> np.ndarray:
        """The latent ρ of ``member`` for each prompt (with auxiliary data or not)."""
        if member != "a":
            return np.full(len(auxiliary), self.kang["member"])
        return np.where(auxiliary, self.kang["auxiliary"], self.kang["plain"])

    # --------------------------------------------------------------------------------- Tokutake et al.'s prompts
    @functools.cached_property
    def tokutake(self) -> pd.DataFrame:
        """Per strategy: the MAE planted (``mae``) and the latent ρ and shift that give it against g (``rho``,
        ``shift``). CoT's ρ and shift give its printed MAE and three-class accuracy; every other prompt has CoT's ρ
        and errs more by a bias upwards (the claim compares MAEs), its accuracy following."""
        printed = effects.tokutake_errors()
        best = printed.loc[effects.TOKUTAKE_BEST]
        levels = self.key.serendipity.answers["g"].to_numpy(dtype=float)
        driver = self.key.serendipity.driver["g"]
        thresholds = self.key.serendipity.g_thresholds
        rho, shift = solve_errors(levels, float(best["mae"]), float(best["accuracy"]), thresholds, driver)
        mae = best["mae"] + self.scale * (printed["mae"] - best["mae"])
        return pd.DataFrame({"mae": mae, "rho": rho,
                             "shift": [solve_bias(levels, float(target), rho, thresholds, shift, driver)
                                       for target in mae]}, index=printed.index)

    # ------------------------------------------------------------------------------------- the re-evaluation
    @functools.cached_property
    def recsys_levels(self) -> pd.Series:
        """The planted mean answer of each recommender's items: Table 3's Avg. Score@20 for the six it prints
        (scaled about their mean), their mean for the others."""
        printed = effects.tokutake_avg_scores()
        neutral = float(printed.mean())
        levels = {name: neutral for name in self.key.recsys.recommenders}
        levels.update({name: neutral + self.scale * (float(value) - neutral) for name, value in printed.items()})
        return pd.Series(levels)

    def recsys_shift(self, recommenders: Sequence[str]) -> float:
        """The latent shift of a pair whose item these recommenders put in their top 20 (none: the neutral level)."""
        levels = self.recsys_levels
        level = float(levels[list(recommenders)].mean()) if len(recommenders) else float(
            effects.tokutake_avg_scores().mean())
        return _shift_for(round(level, 12), self.key.serendipity.kang_thresholds)

    # ------------------------------------------------------------------------------------- Zhang et al.'s prompts
    @functools.cached_property
    def zhang(self) -> pd.DataFrame:
        """Per aspect: the correlation planted (ROUGE-1-F's here plus the scaled lead) and its latent ρ."""
        truths = self.key.explanations
        leads = effects.zhang_leads()
        rows = []
        for aspect, reference in truths.reference_pearson.items():
            target = reference + self.scale * float(leads[aspect])
            rows.append({"aspect": aspect, "pearson": target,
                         "rho": solve_rho(truths.truth[aspect].to_numpy(dtype=float), target,
                                          truths.thresholds(aspect), clamp=self.scale > 1,
                                          driver=truths.driver[aspect])})
        return pd.DataFrame(rows).set_index("aspect")

    # ------------------------------------------------------------------------------------------------ answering
    def answer_prompts(self, prompts: pd.DataFrame, seed: int, member: str = "a") -> np.ndarray:
        """The integer answers to ``prompts`` (:func:`resolve`'s frame, one row per prompt and aspect), in order:
        the one function the server and the simulation share."""
        out = np.full(len(prompts), UNREAD_ANSWER, dtype=int)
        if prompts.empty:
            return out
        for (family, kind), rows in prompts.groupby(["family", "kind"], sort=False):
            index = rows.index.to_numpy()
            noise = self.noise.draw(seed, member, kind, rows["view"].to_numpy(np.uint64),
                                    rows["answer"].to_numpy(np.uint64))
            template = rows["template"].iloc[0]
            if family == "serendipity" and template in KANG_TEMPLATES:
                rho = self.kang_rho(member, rows["auxiliary"].to_numpy(dtype=bool))
                out[index] = answers_of(rows["z"].to_numpy(dtype=float), noise, rho,
                                        self.key.serendipity.kang_thresholds)
            elif family == "serendipity":
                strategy = TOKUTAKE_TEMPLATES[template][0]
                rho, shift = self.tokutake.loc[strategy, ["rho", "shift"]]
                out[index] = answers_of(rows["z"].to_numpy(dtype=float), noise, rho,
                                        self.key.serendipity.g_thresholds, shift)
            elif family == "recsys":
                shifts = np.array([self.recsys_shift(names) for names in rows["recommenders"]])
                out[index] = answers_of(np.zeros(len(rows)), noise, 0.0, self.key.serendipity.kang_thresholds,
                                        shifts)
            elif family == "explanations":
                aspect = rows["aspect"].iloc[0]
                out[index] = answers_of(rows["z"].to_numpy(dtype=float), noise, self.zhang.loc[aspect, "rho"],
                                        self.key.explanations.thresholds(aspect))
        return out

    def answer(self, reading: Reading, seed: int, member: str = "a") -> Answer:
        """The reply to one prompt (the server's)."""
        prompts = resolve(self.key, [reading])
        if prompts.empty:
            return Answer(str(UNREAD_ANSWER), (UNREAD_ANSWER,), read=False)
        scores = tuple(int(v) for v in self.answer_prompts(prompts, seed, member))
        template = reading.template
        if template in TOKUTAKE_TEMPLATES:
            return Answer(f"{TOKUTAKE_TEMPLATES[template][1]}: {scores[0]}", scores)
        if template in ZHANG_MULTI:
            return Answer(json.dumps(dict(zip(prompts["aspect"].str.capitalize(), scores))), scores)
        if template in ZHANG_SINGLE:
            return Answer(f"{reading.fields['aspect_title']}: {scores[0]}", scores)
        return Answer(str(scores[0]), scores)


@functools.lru_cache(maxsize=4096)
def _shift_for(level: float, thresholds: tuple[float, ...]) -> float:
    return solve_mean(level, thresholds)


#: The columns of :func:`resolve`'s frame.
PROMPT_COLUMNS = ("prompt", "template", "kind", "family", "aspect", "view", "answer", "z", "auxiliary",
                  "recommenders")


def _zs(key: PlantedKey, found: Found, template: str, aspect: str) -> float:
    """The standardised truth a prompt of ``template`` is about (the mean over the answers it can be)."""
    if found.family == "serendipity":
        z = key.serendipity.z["g" if template in TOKUTAKE_TEMPLATES else "truth"]
    elif found.family == "explanations":
        z = key.explanations.z[aspect]
    else:
        return math.nan
    return float(z[list(found.members)].mean())


def _view(template: str, fields: Mapping[str, str]) -> int:
    """The hash naming one prompt as the judge reads it: its template and every field it was filled with (two
    settings that show the same answer differently are two prompts)."""
    return text_hash(json.dumps([template, sorted(fields.items())], ensure_ascii=False))


def resolve(key: PlantedKey, readings: Sequence[Reading]) -> pd.DataFrame:
    """What each read prompt is about, one row per prompt and aspect it asks (``PROMPT_COLUMNS``; ``prompt``: its
    position in ``readings``): the prompts a planted judge can read only (an unread one has no row)."""
    rows = []
    for position, reading in enumerate(readings):
        template, fields = reading.template, reading.fields
        if template == UNKNOWN:
            continue
        if template in KANG_TEMPLATES or template in TOKUTAKE_TEMPLATES:
            item, history = fields.get("item"), fields.get("history")
            found = key.serendipity.find(item, history)
            if found is None and template == "kang_basic":
                found = key.recsys.find(item, history)
            if found is None:
                continue
            # Kang et al.'s auxiliary-data template carries its data in a line or, for ratings, in the history (one
            # that carries none reads as the plain few-shot template: fewer fields)
            auxiliary = template == AUXILIARY_TEMPLATE
            listing = key.recsys.pairs["recommenders"] if found.family == "recsys" else None
            recommenders = (tuple(sorted({name for m in found.members for name in listing.iat[m]}))
                            if listing is not None else ())
            view = _view(template, fields)
            rows.append((position, template, template, found.family, "", view, found.answer,
                         _zs(key, found, template, ""), auxiliary, recommenders))
        elif template in ZHANG_MULTI or template in ZHANG_SINGLE:
            found = key.explanations.find(fields.get("movie"), fields.get("explanation"))
            if found is None:
                continue
            aspects = ([aspect_of_title(fields.get("aspect_title", ""))] if template in ZHANG_SINGLE
                       else list(key.explanations.reference_pearson))
            for aspect in aspects:
                if aspect not in key.explanations.reference_pearson:
                    break
                view = _view(template, {**fields, "aspect asked": aspect})
                rows.append((position, template, f"{template}/{aspect}", found.family, aspect, view, found.answer,
                             _zs(key, found, template, aspect), False, ()))
    frame = pd.DataFrame(rows, columns=list(PROMPT_COLUMNS))
    return frame.astype({"view": np.uint64, "answer": np.uint64})
