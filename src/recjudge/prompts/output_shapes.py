"""The output shape each prompt template asks for, declared beside the templates (``recjudge.llm.shapes``).

A template's shape is what its answer-format lines request, written as a schema: a score the prompt asks "from 1
to 5" is an integer among 1..5 under the name the prompt uses ("Serendipity: <score>" becomes
``{"serendipity": 4}``); Tokutake et al.'s CoT keeps its relevance and unexpectedness steps before the serendipity
score it is read for; the least-to-most chain constrains each step's own answer; Khirbat et al.'s recommender
returns a list of exactly k titles.  ``output_shape(template, **params)`` gives the shape (``k`` for the
recommender, and optionally a ``catalogue`` of titles to choose from); a run asks for it with
``JudgeConfig.constrained(shape)``.  Constraining is never the paper's own setting: the book reports a constrained
run beside the unconstrained one.
"""

from __future__ import annotations

from collections.abc import Callable

from recjudge.llm import shapes
from recjudge.llm.shapes import OutputShape, ShapeError

ZHANG_ASPECTS = ("persuasiveness", "transparency", "accuracy", "satisfaction")

_RATING = shapes.score(1, 5, name="rating")
#: template -> the shape it asks for (a callable of the template's shape parameters, if any)
TEMPLATE_SHAPES: dict[str, OutputShape | Callable[..., OutputShape]] = {
    **{name: _RATING for name in ("kang_basic", "kang_fewshot", "kang_fewshot_aux", "kang_llm4seren",
                                  "kang_profile_long", "kang_serenprompt_1", "kang_serenprompt_2",
                                  "likert_generic")},
    "tokutake_base": shapes.score(1, 5, name="serendipity"),
    "tokutake_ls": shapes.score(1, 5, name="serendipity"),
    "tokutake_cot": shapes.scores(("relevance", "unexpectedness", "serendipity"), answer=("serendipity",)),
    "tokutake_ltm": shapes.score(1, 5, name="relevance"),
    "tokutake_ltm_step2": shapes.score(1, 5, name="unexpectedness"),
    "tokutake_ltm_step3": shapes.score(1, 5, name="serendipity"),
    **{name: shapes.scores(ZHANG_ASPECTS) for name in ("zhang_multi_zero_shot", "zhang_multi_one_shot",
                                                       "zhang_multi_personalised", "zhang_authors_multi")},
    **{name: shapes.score(1, 5) for name in ("zhang_single_zero_shot", "zhang_single_one_shot",
                                            "zhang_single_personalised", "zhang_authors_single")},
    "khirbat_recommend": shapes.titles,
}


def output_shape(template: str, **params) -> OutputShape:
    """The shape template ``template`` asks for; ShapeError naming the template when it declares none or when
    its parameters are wrong."""
    try:
        declared = TEMPLATE_SHAPES[template]
    except KeyError:
        raise ShapeError(f"template {template!r} declares no output shape; declared: "
                         f"{', '.join(sorted(TEMPLATE_SHAPES))}") from None
    if isinstance(declared, OutputShape):
        if params:
            raise ShapeError(f"template {template!r}: its output shape takes no parameters, got {sorted(params)}")
        return declared
    try:
        return declared(**params)
    except TypeError as exc:
        raise ShapeError(f"template {template!r}: output shape parameters: {exc}") from None
