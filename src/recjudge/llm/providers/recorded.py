"""Recorded judgments: scores some model gave in someone else's study, imported from a table and attributed to that
model, so they flow through the same tables, parsing and meta-evaluation as judgments asked here.

Configuration (all through ``JudgeConfig.options``)::

    JudgeConfig(provider="recorded", model="gpt-3.5-turbo",
                options=(("source", "gpt35-serendipity"),))                      # a registered source, or
    JudgeConfig(provider="recorded", model="gpt-3.5-turbo",
                options=(("source", "/path/file.csv"), ("key_columns", ("userId", "movieId")),
                         ("score_column", "gpt-rating")))

source:        a registered name (``RECORDED_SOURCES``) or a CSV path.
key_columns:   columns whose values, joined with ":", form the request key (``JudgeRequest.key``), e.g.
               "205229:108979".  Integral floats are written without ".0".  Default ("user_id", "item_id").
score_column:  the column holding the recorded reply (a score, or a reply text); it is returned as reply text and
               parsed by the run's parser like any reply.  An empty cell is an empty reply (unparsable -> NaN).

Requests are answered by key; the request messages are ignored.  No store entry is written (the source file is
the record) and no tokens or cost are counted.  A key absent from the source is a failed judgment (NaN, listed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from .base import ChatProvider, Completion, ProviderError, ProviderRequest


@dataclass(frozen=True)
class RecordedSource:
    """A named recorded-judgment table: how to load it and which columns hold key and score."""

    loader: Callable[[], pd.DataFrame]
    key_columns: tuple[str, ...]
    score_column: str
    description: str


def _load_gpt35_serendipity() -> pd.DataFrame:
    from recjudge.data import load_gpt35_serendipity  # owned by the data layer; imported only when used

    return load_gpt35_serendipity()


#: Registered sources by name.
RECORDED_SOURCES: dict[str, RecordedSource] = {
    "gpt35-serendipity": RecordedSource(
        loader=_load_gpt35_serendipity,
        key_columns=("user_id", "item_id"),
        score_column="gpt35_score",
        description="gpt-3.5-turbo serendipity scores per Serendipity-2018 answer (Tvergara 2023 file)",
    ),
}


def format_key_value(value: Any) -> str:
    """How one key cell is written in a request key: integral numbers without a decimal part."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def request_key(values: Any) -> str:
    """The request key for a row's key-column values (joined with ':')."""
    return ":".join(format_key_value(v) for v in values)


class RecordedProvider(ChatProvider):
    """Answers requests by key from a recorded table (``provider="recorded"``)."""

    name = "recorded"
    answers_by_request_key = True

    def __init__(self, source: str, key_columns: tuple[str, ...] | str | None = None, score_column: str | None = None):
        registered = RECORDED_SOURCES.get(source)
        if registered is not None:
            frame = registered.loader()
            key_columns = key_columns or registered.key_columns
            score_column = score_column or registered.score_column
            origin = f"recorded source {source!r}"
        else:
            path = Path(source)
            if not path.is_file():
                raise ProviderError(
                    f"recorded source {source!r} is neither a registered name ({', '.join(RECORDED_SOURCES)}) "
                    "nor an existing CSV file"
                )
            frame = pd.read_csv(path, encoding="utf-8-sig")
            origin = str(path)
            if score_column is None:
                raise ProviderError(f"recorded source {origin}: option 'score_column' is required for a CSV path")
        if isinstance(key_columns, str):
            key_columns = tuple(c.strip() for c in key_columns.split(","))
        key_columns = tuple(key_columns or ("user_id", "item_id"))
        missing = [c for c in (*key_columns, score_column) if c not in frame.columns]
        if missing:
            raise ProviderError(f"{origin}: missing column(s) {missing}; columns are {list(frame.columns)}")
        self.origin = origin
        self.key_columns = key_columns
        self.score_column = score_column
        self._answers: dict[str, str] = {}
        for row_number, (values, reply) in enumerate(
            zip(frame[list(key_columns)].itertuples(index=False, name=None), frame[score_column]), start=1
        ):
            key = request_key(values)
            if key in self._answers:
                raise ProviderError(f"{origin}: duplicate key {key!r} (columns {key_columns}) at data row {row_number}")
            self._answers[key] = _reply_text(reply)

    def __repr__(self) -> str:
        return f"RecordedProvider({self.origin!r}, key_columns={self.key_columns}, score_column={self.score_column!r})"

    def __len__(self) -> int:
        return len(self._answers)

    def keys(self) -> list[str]:
        return list(self._answers)

    def answer(self, key: str) -> Completion | None:
        """The recorded reply for a request key, or None when the source has none."""
        text = self._answers.get(key)
        return None if text is None else Completion(text=text, input_tokens=0, output_tokens=0, latency_s=0.0)

    def ask(self, request: ProviderRequest) -> Completion:
        raise ProviderError("recorded judgments are looked up by request key, not by prompt; use run_judge")


def _reply_text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)
