"""Metamorphic relations: functions from a prompt text to a follow-up prompt text that should not change the answer.

Khirbat et al. (2024), section 3.3:

- ``mr1_multiply`` (MR1, rating multiplication): every rating "R/5" becomes "λR/5λ", e.g. 4/5 -> 8/10 (λ = 2).
- ``mr2_shift`` (MR2, rating shifting): every "R/5" becomes "(λ+R)/(λ+5)", e.g. 4/5 -> 6/7 (λ = 2).
  The paper changes "just the ratings part of the prompt, keeping rest exactly the same", so the legend
  "(1 being lowest and 5 being highest)" is left as it is; a rating is the text "R/5" with R a number preceded by a
  space (how ``recjudge.prompts.recommendation`` writes it), so "9/11" or "1/5" inside a title are left alone
  unless written exactly like a rating.
- ``mr3_spaces`` (MR3, adding spaces): a space between every two adjacent non-space characters of the text.
- ``mr4_random_words`` (MR4, adding random words): words from "apple", "grape", "banana", "pear" inserted at
  random word boundaries, seeded (``n`` words, or one per ``every`` words).

Beyond the paper, for the judges (``recjudge.metamorphic.judges``):

- ``shuffle_list`` (history order): the items of a separator-joined list in a seeded random order.
- ``paraphrase`` (reworded instruction): exact sentence replacements, each of which must occur in the text.

MR3 and MR4 act on the part of the prompt "containing user history and rating"; ``apply_to_span`` applies any
text relation to the text between two markers only. Every relation is deterministic given its arguments (a seed
where it is random), so a follow-up prompt is reproducible and its reply replays from the response store.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

RANDOM_WORDS = ("apple", "grape", "banana", "pear")
_RATING = re.compile(r"(?<=\s)(\d+(?:\.\d+)?)/5(?![\d.]*\d)")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _rewrite_ratings(prompt: str, rewrite: Callable[[float], str], name: str) -> str:
    result, count = _RATING.subn(lambda m: rewrite(float(m.group(1))), prompt)
    if count == 0:
        raise ValueError(f"{name}: the prompt holds no rating written ' R/5': {prompt[:120]!r}")
    return result


def mr1_multiply(prompt: str, lam: int = 2) -> str:
    """MR1: every rating "R/5" becomes "λR/5λ" (λ a positive integer other than 1)."""
    if int(lam) != lam or lam < 2:
        raise ValueError(f"MR1 needs an integer λ >= 2, got {lam!r}")
    return _rewrite_ratings(prompt, lambda r: f"{_number(lam * r)}/{5 * lam}", "MR1")


def mr2_shift(prompt: str, lam: int = 2) -> str:
    """MR2: every rating "R/5" becomes "(λ+R)/(λ+5)" (λ a non-zero integer with λ + 5 > 0)."""
    if int(lam) != lam or lam == 0 or lam + 5 <= 0:
        raise ValueError(f"MR2 needs a non-zero integer λ > -5, got {lam!r}")
    return _rewrite_ratings(prompt, lambda r: f"{_number(lam + r)}/{lam + 5}", "MR2")


def mr3_spaces(text: str) -> str:
    """MR3: a space between every two adjacent non-space characters ("Toy Story" -> "T o y S t o r y")."""
    return re.sub(r"(?<=\S)(?=\S)", " ", text)


def mr4_random_words(text: str, seed: int = 0, n: int | None = None, every: int = 5,
                     words: Sequence[str] = RANDOM_WORDS) -> str:
    """MR4: random words inserted between words of ``text`` at seeded random boundaries.

    n: how many words to insert; default one per ``every`` words of the text (at least one)."""
    tokens = text.split(" ")
    if n is None:
        n = max(1, len(tokens) // every)
    if n < 1:
        raise ValueError(f"MR4 needs n >= 1, got {n}")
    rng = np.random.default_rng(seed)
    gaps = rng.integers(0, len(tokens) + 1, size=n)  # insert before token index (len = at the end)
    chosen = rng.integers(0, len(words), size=n)
    inserts: dict[int, list[str]] = {}
    for gap, word in zip(gaps.tolist(), chosen.tolist()):
        inserts.setdefault(gap, []).append(words[word])
    out: list[str] = []
    for index in range(len(tokens) + 1):
        out.extend(inserts.get(index, []))
        if index < len(tokens):
            out.append(tokens[index])
    return " ".join(out)


def shuffle_list(text: str, seed: int = 0, sep: str = ", ", split: str | None = None) -> str:
    r"""The items of a ``sep``-joined list in a seeded random order that differs from the original when it can.

    split: a regular expression that finds the separators when ``sep`` also occurs inside items (e.g.
    ``r"(?<=\)), "`` for "Title, The (1999), Other (2001)": only a comma after a closing parenthesis separates)."""
    items = re.split(split, text) if split else text.split(sep)
    if len(items) < 2:
        return text
    rng = np.random.default_rng(seed)
    for _ in range(20):
        order = rng.permutation(len(items))
        if not np.array_equal(order, np.arange(len(items))):
            break
    return sep.join(items[i] for i in order)


def paraphrase(text: str, replacements: Mapping[str, str]) -> str:
    """Each key of ``replacements`` (a sentence of the instruction) replaced by its value; every key must occur."""
    for old, new in replacements.items():
        if old not in text:
            raise ValueError(f"paraphrase: the text does not contain {old[:80]!r}")
        text = text.replace(old, new)
    return text


def apply_to_span(text: str, start: str, end: str | None, relation: Callable[[str], str]) -> str:
    """``relation`` applied to the text after the marker ``start`` and before the next ``end`` (or the text's end).

    Raises ValueError naming the marker that is missing."""
    begin = text.find(start)
    if begin < 0:
        raise ValueError(f"marker {start!r} not found in the prompt: {text[:120]!r}")
    begin += len(start)
    stop = len(text) if end is None else text.find(end, begin)
    if stop < 0:
        raise ValueError(f"marker {end!r} not found after {start!r} in the prompt: {text[:120]!r}")
    return text[:begin] + relation(text[begin:stop]) + text[stop:]


__all__ = ["RANDOM_WORDS", "apply_to_span", "mr1_multiply", "mr2_shift", "mr3_spaces", "mr4_random_words",
           "paraphrase", "shuffle_list"]
