"""Token prices, for the runner's cost accounting.

USD per one million tokens (input, output), from the providers' public price lists (standard tier, no cache
discounts; replies through a batch API at ``BATCH_DISCOUNT``) as of 2025; check them before budgeting a large run.
Local and recorded judges cost nothing.
A model missing from the table has an unknown cost: NaN, and the run report says so rather than guessing.
"""

from __future__ import annotations

import math

#: (provider, model) -> (USD per 1M input tokens, USD per 1M output tokens).  Dated model names fall back to the
#: longest listed prefix (e.g. "gpt-4o-mini-2024-07-18" -> "gpt-4o-mini").
PRICES_PER_MILLION: dict[tuple[str, str], tuple[float, float]] = {
    ("openai", "gpt-3.5-turbo"): (0.50, 1.50),
    ("openai", "gpt-4"): (30.00, 60.00),
    ("openai", "gpt-4-turbo"): (10.00, 30.00),
    ("openai", "gpt-4o"): (2.50, 10.00),
    ("openai", "gpt-4o-mini"): (0.15, 0.60),
    ("openai", "gpt-4.1"): (2.00, 8.00),
    ("openai", "gpt-4.1-mini"): (0.40, 1.60),
    ("openai", "gpt-4.1-nano"): (0.10, 0.40),
    ("anthropic", "claude-3-haiku"): (0.25, 1.25),
    ("anthropic", "claude-3-5-haiku"): (0.80, 4.00),
    ("anthropic", "claude-3-5-sonnet"): (3.00, 15.00),
    ("anthropic", "claude-3-7-sonnet"): (3.00, 15.00),
    ("anthropic", "claude-sonnet-4"): (3.00, 15.00),
    ("anthropic", "claude-3-opus"): (15.00, 75.00),
}

FREE_PROVIDERS = frozenset({"local", "recorded"})
#: Price factor of replies obtained through a provider's batch API (OpenAI Batch API and Anthropic Message Batches:
#: half the standard price for input and output tokens).
BATCH_DISCOUNT: dict[str, float] = {"openai": 0.5, "anthropic": 0.5}


def price(provider: str, model: str) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens, (0, 0) for local/recorded judges, None when unknown."""
    if provider in FREE_PROVIDERS:
        return (0.0, 0.0)
    if (provider, model) in PRICES_PER_MILLION:
        return PRICES_PER_MILLION[(provider, model)]
    candidates = [m for (p, m) in PRICES_PER_MILLION if p == provider and model.startswith(m + "-")]
    if candidates:
        return PRICES_PER_MILLION[(provider, max(candidates, key=len))]
    return None


def cost_usd(provider: str, model: str, input_tokens: int, output_tokens: int, *, batch: bool = False) -> float:
    """Cost of the given token counts (at the batch rate when ``batch``); NaN when the model's price is unknown."""
    rates = price(provider, model)
    if rates is None:
        return math.nan
    factor = BATCH_DISCOUNT.get(provider, 1.0) if batch else 1.0
    return factor * (input_tokens * rates[0] + output_tokens * rates[1]) / 1_000_000
