"""The prompt of the LLM recommender of Khirbat et al. (2024) (template ``khirbat_recommend``).

A user's liked items are written "Title (year) R/5", comma-separated, in the order given (the caller decides which
l items and in which order; ``recjudge.metamorphic.recommender`` takes the l most recent ratings above 3, oldest
first). Ratings keep their half stars ("4.5/5"). The rating text "R/5" is what the rating relations MR1 and MR2 of
``recjudge.metamorphic.relations`` rewrite.
"""

from __future__ import annotations

from collections.abc import Iterable

from recjudge.prompts import render

TEMPLATE = "khirbat_recommend"


def rating_text(rating: float, scale: int = 5) -> str:
    """"4/5", "4.5/5": the rating as the paper writes it (R/5)."""
    value = float(rating)
    number = str(int(value)) if value.is_integer() else f"{value:g}"
    return f"{number}/{scale}"


def liked_items_text(items: Iterable[tuple[str, float]]) -> str:
    """"Title (year) R/5, Title (year) R/5, ..." from (title, rating) pairs."""
    parts = [f"{title} {rating_text(rating)}" for title, rating in items]
    if not parts:
        raise ValueError("a recommendation prompt needs at least one liked item")
    return ", ".join(parts)


def recommendation_messages(user: object, items: Iterable[tuple[str, float]], k: int) -> list[dict[str, str]]:
    """The chat messages (one user turn) asking for ``k`` recommendations for ``user``'s liked ``items``."""
    if int(k) < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return render(TEMPLATE, user=str(user), movies=liked_items_text(items), k=int(k))


__all__ = ["TEMPLATE", "liked_items_text", "rating_text", "recommendation_messages"]
