"""Prompts of the serendipity judge of Tokutake, Okamoto et al. (2025), section 3.2: Base, LS, CoT and LtM.

All four are *reconstructions*: the paper describes them and shows an overview (Figure 2: the judge's role,
serendipity as relevance plus unexpectedness, the user's last n = 10 items and the recommended item as names and
categories, a five-level score) but prints no prompt text. Templates (``src/recjudge/prompts/templates``):

- ``tokutake_base``: a five-level serendipity score, no description of the levels;
- ``tokutake_ls``: Base plus the Likert description of the five levels;
- ``tokutake_cot``: LS plus three steps (relevance, unexpectedness, serendipity), each scored in the reply;
- ``tokutake_ltm`` → ``tokutake_ltm_step2`` → ``tokutake_ltm_step3``: the three steps as chained sub-prompts. The
  chat of step k+1 is the chat of step k, the model's reply to it and the next question (``ltm_next_messages``).

Every template carries a 10-shot examples block in its system turn (two solved examples per level, chosen by
``recjudge.serendipity.prompt_strategies.select_examples``), so all prompts of a run share one long prefix.
Item text: "Title (year), genres: A, B"; history: comma-separated "Title (year)", oldest first
(``recjudge.prompts.serendipity``). Prompt items are names with categories, as the paper specifies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from recjudge.prompts import one_line

STRATEGIES = ("base", "ls", "cot", "ltm")
STRATEGY_NAMES = {"base": "Base", "ls": "LS", "cot": "CoT", "ltm": "LtM"}
TEMPLATES = {"base": "tokutake_base", "ls": "tokutake_ls", "cot": "tokutake_cot", "ltm": "tokutake_ltm"}
LTM_STEPS = ("tokutake_ltm", "tokutake_ltm_step2", "tokutake_ltm_step3")
STEP_NAMES = ("relevance", "unexpectedness", "serendipity")
#: Every template here is a reconstruction (the paper prints no prompt text).
RECONSTRUCTED = frozenset(TEMPLATES.values()) | frozenset(LTM_STEPS)


def check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown prompt strategy {strategy!r}; known: {STRATEGIES}")


def example_text(strategy: str, history: str, item: str, scores: Mapping[str, object]) -> str:
    """One solved example as it appears in the examples block of ``strategy``'s template: Base and LS show the
    serendipity score, CoT and LtM the three step scores."""
    check_strategy(strategy)
    head = f"User's last movies: {one_line(history)}\nRecommended movie: {one_line(item)}\n"
    if strategy in ("base", "ls"):
        return head + f"Serendipity: {int(scores['serendipity'])}"  # type: ignore[call-overload]
    return head + "\n".join(f"{step.capitalize()}: {int(scores[step])}" for step in STEP_NAMES)  # type: ignore[call-overload]


def examples_block(strategy: str, examples: Sequence[Mapping[str, object]]) -> str:
    """The examples block: each example (``history``, ``item`` and the step scores) separated by a blank line."""
    return "\n\n".join(example_text(strategy, str(e["history"]), str(e["item"]), e) for e in examples)


def first_messages(strategy: str, history: str, item: str, examples: str) -> list[dict[str, str]]:
    """The chat of a single-call strategy, or of the first LtM step."""
    from recjudge.prompts import render

    check_strategy(strategy)
    return render(TEMPLATES[strategy], history=history, item=item, examples=examples)


def ltm_next_messages(previous: list[dict[str, str]], reply: str | None, step: int) -> list[dict[str, str]]:
    """The chat of LtM step ``step`` (2 or 3): the previous step's chat, the model's reply to it, the next question.
    A failed previous call (no reply) is carried as an empty assistant turn."""
    from recjudge.prompts import render

    if step not in (2, 3):
        raise ValueError(f"LtM steps after the first are 2 and 3, got {step}")
    text = "" if reply is None or (isinstance(reply, float) and reply != reply) else str(reply)
    return [*previous, {"role": "assistant", "content": text}, *render(LTM_STEPS[step - 1])]
