"""Shared test set-up."""

import pytest


@pytest.fixture(autouse=True)
def _llm_mode_from_the_test_not_the_shell(monkeypatch):
    # The book build replays the store (RECJUDGE_LLM_MODE=replay); tests choose their own mode explicitly, so the
    # calling shell's setting must not leak into them.
    monkeypatch.delenv("RECJUDGE_LLM_MODE", raising=False)
