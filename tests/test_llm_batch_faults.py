"""Batch mode under faults (recjudge.llm.batch): unreadable result lines, transient errors while polling or
downloading, and the client-side deadline.  A paid batch must never be lost: every good line is stored, every bad
line named, the ledger closed once the batch is read, and a batch that could not be read stays in the ledger."""

from __future__ import annotations

import json
from collections.abc import Callable

import mock_openai_server as mock_server
import pytest
from mock_openai_server import MockOpenAIServer

from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
from recjudge.llm import batch as batch_api
from recjudge.llm.providers.base import ProviderError
from recjudge.llm.store import ResponseStore

DEADLINE_ENV = "RECJUDGE_LLM_BATCH_DEADLINE"
KEYS = {"openai": "sk-test-secret-openai", "anthropic": "sk-ant-test-secret"}
N = 6


def _requests(n: int = N) -> list[JudgeRequest]:
    return [JudgeRequest(f"k{i}", [{"role": "system", "content": "Rate 1-5."},
                                   {"role": "user", "content": f"film {i}"}]) for i in range(n)]


def _config(provider: str, server: MockOpenAIServer) -> JudgeConfig:
    if provider == "openai":
        return JudgeConfig(provider="openai", model="gpt-4o-mini", served_model="gpt-4o-mini",
                           base_url=server.base_url)
    return JudgeConfig(provider="anthropic", model="claude-sonnet-4-6", base_url=server.root_url)


def _run(provider: str, server: MockOpenAIServer, store, **kwargs):
    return run_judge(_config(provider, server), _requests(), store=store, batch=True, batch_poll_s=0,
                     progress=False, **kwargs)


def _ledger(provider: str, store) -> batch_api.BatchLedger:
    return batch_api.BatchLedger(store, provider, "gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-6")


def _set_keys(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEYS["openai"])
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEYS["anthropic"])
    for name in (batch_api.POLL_ENV, DEADLINE_ENV, batch_api.BATCH_ENV, "RECJUDGE_LLM_MODE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    _set_keys(monkeypatch)


def _heal(monkeypatch) -> None:
    """Undo the mock's faults (and every other patch), keeping the API keys."""
    monkeypatch.undo()
    _set_keys(monkeypatch)


# ------------------------------------------------------------------------------------- unreadable result lines
Lines = list[bytes]


def _insert_not_json(lines: Lines, provider: str) -> bytes:
    lines.insert(2, b"<html>502 Bad Gateway</html>")
    return b"\n".join(lines) + b"\n"


def _insert_not_json_first(lines: Lines, provider: str) -> bytes:
    return b"\n".join([b"{not json", *lines]) + b"\n"


def _not_an_object(lines: Lines, provider: str) -> bytes:
    lines[1] = b"[1, 2, 3]"
    return b"\n".join(lines) + b"\n"


def _wrong_shape(lines: Lines, provider: str) -> bytes:
    entry = json.loads(lines[1])
    entry["response" if provider == "openai" else "result"] = "oops"
    lines[1] = json.dumps(entry).encode()
    return b"\n".join(lines) + b"\n"


def _truncated(lines: Lines, provider: str) -> bytes:
    lines[-1] = lines[-1][: len(lines[-1]) // 2]
    return b"\n".join(lines)  # the file ends inside its last line


def _unknown_id(lines: Lines, provider: str) -> bytes:
    entry = json.loads(lines[0])
    entry["custom_id"] = "not-a-key-of-this-batch"
    lines.append(json.dumps(entry).encode())
    return b"\n".join(lines) + b"\n"


def _server_error(lines: Lines, provider: str) -> bytes:
    entry = json.loads(lines[1])
    if provider == "openai":
        entry.update(error=None, response={"status_code": 500, "request_id": "r",
                                           "body": {"error": "Internal server error"}})
    else:
        entry["result"] = {"type": "errored", "error": {"type": "error", "error": {
            "type": "api_error", "message": "Internal server error"}}}
    lines[1] = json.dumps(entry).encode()
    return b"\n".join(lines) + b"\n"


#: corruption, replies stored, failures by kind, number of the unreadable line (None: no unreadable line)
CASES = {
    "not_json": (_insert_not_json, N, {}, 3),
    "not_an_object": (_not_an_object, N - 1, {"malformed": 1}, 2),
    "wrong_shape": (_wrong_shape, N - 1, {"malformed": 1}, 2),
    "truncated_last_line": (_truncated, N - 1, {"malformed": 1}, N),
    "unknown_custom_id": (_unknown_id, N, {}, N + 1),
    "server_error_line": (_server_error, N - 1, {"batch_error": 1}, None),
}


def _corrupt_results(monkeypatch, provider: str, corrupt: Callable[[Lines, str], bytes],
                     which: str = "output_file_id") -> None:
    """Make the mock serve the batch's results (OpenAI: the output or error file; Anthropic: the results stream)
    changed by ``corrupt``."""
    if provider == "anthropic":
        original_results = mock_server._batch_results

        def results(mock, batch_id):
            return corrupt(original_results(mock, batch_id).rstrip(b"\n").split(b"\n"), provider)

        monkeypatch.setattr(mock_server, "_batch_results", results)
        return
    original_status = mock_server._batch_status
    done: set[str] = set()

    def status(mock, batch_id, host, poll=True):
        answer = original_status(mock, batch_id, host, poll)
        file_id = answer.get(which)
        if file_id and file_id not in done:
            done.add(file_id)
            mock.files[file_id] = corrupt(mock.files[file_id].rstrip(b"\n").split(b"\n"), provider)
        return answer

    monkeypatch.setattr(mock_server, "_batch_status", status)


def _check_resubmits_only_the_failures(provider: str, store, n_failed: int) -> None:
    with MockOpenAIServer() as server:
        again = _run(provider, server, store)
        assert server.batch_requests == n_failed
    assert again.report.n_replies == N and again.report.n_failed == 0


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_one_bad_result_line_loses_nothing_else(provider, case, tmp_path, monkeypatch):
    corrupt, n_stored, failed, bad_line = CASES[case]
    _corrupt_results(monkeypatch, provider, corrupt)
    with MockOpenAIServer() as server:
        run = _run(provider, server, tmp_path)
    batch_id = run.report.batches["submitted"][0]
    # every good line is stored, the bad one is a failed judgment (or nothing, when it held no wanted prompt)
    assert len(ResponseStore(tmp_path).records()) == n_stored
    assert run.report.n_replies == n_stored and run.report.failed_by_kind == failed
    # the bad line is counted and named (batch id, file, line number) in the run's report
    report = str(run.report)
    if bad_line is None:
        assert run.report.batches["unreadable_lines"] == []
        failure = run.table.dropna(subset=["error"])["error"].iloc[0]
        assert batch_id in failure and "line 2" in failure and "Internal server error" in failure
    else:
        named = run.report.batches["unreadable_lines"]
        assert len(named) == 1 and batch_id in named[0] and f"line {bad_line}:" in named[0]
        assert named[0] in report and "1 unreadable line" in report
        source = "output file" if provider == "openai" else "results"
        assert source in named[0]
    # the ledger entry is closed: later runs do not stumble on it again
    assert not _ledger(provider, tmp_path).pending()
    _heal(monkeypatch)
    _check_resubmits_only_the_failures(provider, tmp_path, N - n_stored)


def test_a_bad_line_in_openais_error_file_is_named_and_the_rest_kept(tmp_path, monkeypatch):
    _corrupt_results(monkeypatch, "openai", _insert_not_json_first, which="error_file_id")
    with MockOpenAIServer(batch_failing_prompts={"film 5"}) as server:
        run = _run("openai", server, tmp_path)
    assert run.report.n_replies == N - 1 and run.report.failed_by_kind == {"batch_error": 1}
    named = run.report.batches["unreadable_lines"]
    assert len(named) == 1 and "error file" in named[0] and "line 1:" in named[0]
    assert not _ledger("openai", tmp_path).pending()


def test_a_batch_with_only_unreadable_lines_fails_its_prompts_and_is_closed(tmp_path, monkeypatch):
    _corrupt_results(monkeypatch, "anthropic", lambda lines, provider: b"\x00\xff garbage\n" * len(lines))
    with MockOpenAIServer() as server:
        run = _run("anthropic", server, tmp_path)
    assert run.report.n_replies == 0 and run.report.failed_by_kind == {"malformed": N}
    assert len(run.report.batches["unreadable_lines"]) == N
    assert "unreadable" in run.table["error"].iloc[0]
    assert not _ledger("anthropic", tmp_path).pending()


# --------------------------------------------------------------------------- transient errors while polling
def _failing_gets(monkeypatch, marker: Callable[[str], bool], times: int, *, drop: bool = False) -> list[str]:
    """The mock answers its next ``times`` GETs whose path ``marker`` accepts with a 503 whose body echoes the
    API key (or drops the connection with ``drop``); returns the list of paths so answered."""
    original = mock_server._Handler.do_GET
    failed: list[str] = []

    def do_get(handler):
        if marker(handler.path) and len(failed) < times:
            failed.append(handler.path)
            if drop:
                handler._drop()
                return
            busy = f"upstream busy (key {KEYS['openai']} / {KEYS['anthropic']})"
            body = {"type": "error", "error": {"type": "overloaded_error", "message": busy}}
            handler._send(503, json.dumps(body).encode())
            return
        original(handler)

    monkeypatch.setattr(mock_server._Handler, "do_GET", do_get)
    return failed


def _is_status(path: str) -> bool:
    return "/batches/" in path and not path.rstrip("/").endswith("/results")


def _is_download(path: str) -> bool:
    return path.rstrip("/").endswith(("/results", "/content"))


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    """Waits asked of time.sleep by the batch module, recorded instead of slept."""
    asked: list[float] = []
    monkeypatch.setattr(batch_api.time, "sleep", asked.append)
    return asked


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_503_while_polling_is_retried_with_backoff(provider, tmp_path, monkeypatch, sleeps):
    failed = _failing_gets(monkeypatch, _is_status, 3)
    with MockOpenAIServer(batch_polls_to_end=2) as server:
        run = _run(provider, server, tmp_path)
        assert server.batch_submissions == 1
    assert len(failed) == 3 and run.report.n_replies == N
    backoff = [seconds for seconds in sleeps if seconds > 0]
    assert len(backoff) == 3 and backoff == sorted(backoff)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_dropped_connections_while_downloading_results_are_retried(provider, tmp_path, monkeypatch, sleeps):
    failed = _failing_gets(monkeypatch, _is_download, 2, drop=True)
    with MockOpenAIServer() as server:
        run = _run(provider, server, tmp_path)
    assert len(failed) == 2 and run.report.n_replies == N
    assert not _ledger(provider, tmp_path).pending()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("where", ["status", "download"])
def test_polling_that_keeps_failing_ends_in_a_clear_error_and_the_next_run_resumes(provider, where, tmp_path,
                                                                                    monkeypatch, sleeps):
    failed = _failing_gets(monkeypatch, _is_status if where == "status" else _is_download, 10 ** 6)
    with MockOpenAIServer() as server:
        with pytest.raises(batch_api.BatchUnavailable) as caught:
            _run(provider, server, tmp_path)
        message = str(caught.value)
        batch_id = next(iter(server.batches))
        assert isinstance(caught.value, ProviderError)
        assert len(failed) == batch_api.POLL_RETRY_ATTEMPTS  # bounded
        assert batch_id in message and "ledger" in message and "resume" in message and "503" in message
        assert KEYS["openai"] not in message and KEYS["anthropic"] not in message and "***" in message
        assert [entry["id"] for entry in _ledger(provider, tmp_path).pending()] == [batch_id]
        _heal(monkeypatch)
        again = _run(provider, server, tmp_path)
        assert server.batch_submissions == 1  # resumed, not paid for twice
    assert again.report.batches["resumed"] == [batch_id] and again.report.n_replies == N


# ------------------------------------------------------------------------------------------ polling deadline
@pytest.mark.timeout(120)
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_polling_stops_at_the_deadline_and_keeps_the_ledger(provider, tmp_path, monkeypatch):
    monkeypatch.setenv(batch_api.POLL_ENV, "0.02")
    monkeypatch.setenv(DEADLINE_ENV, "0.2")
    with MockOpenAIServer(batch_polls_to_end=10 ** 9) as server:
        config = _config(provider, server)
        run = run_judge(config, _requests(), store=tmp_path, batch=True, progress=False)
        assert run.report.failed_by_kind == {"batch_pending": N}
        assert run.report.batches["pending"] == run.report.batches["submitted"]
        error = run.table["error"].iloc[0]
        assert DEADLINE_ENV in error and "run again" in error
        assert DEADLINE_ENV in str(run.report)
        assert len(_ledger(provider, tmp_path).pending()) == 1
        server.batch_polls_to_end = 1
        again = run_judge(config, _requests(), store=tmp_path, batch=True, progress=False)
        assert server.batch_submissions == 1
    assert again.report.n_replies == N and not _ledger(provider, tmp_path).pending()


@pytest.mark.parametrize("value", ["soon", "0", "-5", "nan"])
def test_a_bad_deadline_is_refused_before_anything_is_submitted(value, tmp_path, monkeypatch):
    monkeypatch.setenv(DEADLINE_ENV, value)
    with MockOpenAIServer() as server:
        with pytest.raises(ValueError, match=DEADLINE_ENV):
            _run("openai", server, tmp_path)
        assert server.batch_submissions == 0


def test_the_deadline_default_outlasts_the_providers_window(monkeypatch):
    assert batch_api.deadline_seconds() == batch_api.DEFAULT_DEADLINE_S > 24 * 3600
    monkeypatch.setenv(DEADLINE_ENV, "90")
    assert batch_api.deadline_seconds() == 90.0
