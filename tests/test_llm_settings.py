"""Environment settings: numbers and switches read with errors naming the variable."""

import pytest

from recjudge.llm.batch import POLL_ENV, poll_seconds
from recjudge.llm.providers.base import ProviderError
from recjudge.llm.providers.openai_compat import TIMEOUT_ENV, timeout_from_env
from recjudge.settings import env_flag, env_number


@pytest.mark.parametrize("raw, kind, expected", [("2.5", float, 2.5), (" 16 ", int, 16), ("", float, None)])
def test_env_number_reads_numbers(monkeypatch, raw, kind, expected):
    monkeypatch.setenv("RECJUDGE_TEST_NUMBER", raw)
    assert env_number("RECJUDGE_TEST_NUMBER", kind) == expected


def test_env_number_unset_is_none(monkeypatch):
    monkeypatch.delenv("RECJUDGE_TEST_NUMBER", raising=False)
    assert env_number("RECJUDGE_TEST_NUMBER") is None


@pytest.mark.parametrize("raw, kind, allow_zero, message", [
    ("fast", float, False, "is not a number of seconds"),
    ("2.5", int, False, "is not a whole number of seconds"),
    ("0", float, False, "must be positive seconds"),
    ("-1", float, True, "must be zero or more seconds"),
    ("nan", float, True, "is not a finite number"),
])
def test_env_number_names_the_variable_and_value(monkeypatch, raw, kind, allow_zero, message):
    monkeypatch.setenv("RECJUDGE_TEST_NUMBER", raw)
    with pytest.raises(ValueError, match=rf"RECJUDGE_TEST_NUMBER='{raw}' {message}"):
        env_number("RECJUDGE_TEST_NUMBER", kind, allow_zero=allow_zero, unit="seconds")


def test_zero_allowed_only_when_asked(monkeypatch):
    monkeypatch.setenv("RECJUDGE_TEST_NUMBER", "0")
    assert env_number("RECJUDGE_TEST_NUMBER", allow_zero=True) == 0


@pytest.mark.parametrize("raw, expected", [("1", True), ("YES", True), ("on", True), ("0", False), ("off", False),
                                           ("", None)])
def test_env_flag(monkeypatch, raw, expected):
    monkeypatch.setenv("RECJUDGE_TEST_FLAG", raw)
    assert env_flag("RECJUDGE_TEST_FLAG", default=None) is expected


def test_env_flag_rejects_other_words(monkeypatch):
    monkeypatch.setenv("RECJUDGE_TEST_FLAG", "maybe")
    with pytest.raises(ValueError, match="RECJUDGE_TEST_FLAG='maybe' is not a switch"):
        env_flag("RECJUDGE_TEST_FLAG", default=False)


def test_batch_poll_interval_from_the_environment(monkeypatch):
    monkeypatch.setenv(POLL_ENV, "0")
    assert poll_seconds() == 0
    assert poll_seconds(3) == 3
    monkeypatch.setenv(POLL_ENV, "soon")
    with pytest.raises(ValueError, match=POLL_ENV):
        poll_seconds()


def test_timeout_error_is_a_configuration_error(monkeypatch):
    monkeypatch.setenv(TIMEOUT_ENV, "-5")
    with pytest.raises(ProviderError, match=TIMEOUT_ENV) as caught:
        timeout_from_env()
    assert caught.value.configuration
    monkeypatch.setenv(TIMEOUT_ENV, "12")
    assert timeout_from_env() == 12


@pytest.mark.parametrize("value", ["inf", "Infinity", "-inf", "nan", "1e999"])
@pytest.mark.parametrize("name", ["RECJUDGE_LLM_TIMEOUT", "RECJUDGE_LLM_RPM", "RECJUDGE_LLM_MAX_USD"])
def test_numbers_that_are_not_finite_are_refused_naming_the_variable(monkeypatch, name, value):
    from recjudge.settings import env_number

    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=name):
        env_number(name, float, allow_zero=True)
