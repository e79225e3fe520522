"""The OpenAI path end to end against a real server: llama-cpp-python's own OpenAI-compatible server with SmolLM2 on
127.0.0.1 (the ``llama_server`` fixture of conftest.py), asked through the project's OpenAI-compatible provider and
runner with the judge spec ``openai:<identity>`` + base URL + served model, as ``recjudge run --judge`` builds it.

The tests that start a server skip when llama-cpp-python's server extra is not installed (fail with
RECJUDGE_REQUIRE_LOCAL_MODEL=1; the ``llama_server_packages`` fixture); the other tests of ``recjudge serve`` need no
server package (they check the arguments and the state file only).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading

import pytest

from recjudge.llm import JudgeConfig, JudgeRequest, ResponseStore, run_judge
from recjudge.llm.parsing import expected_score, parse_likert
from recjudge.llm.providers import get_provider
from recjudge.llm.providers.local import DEFAULT_MODEL
from recjudge.llm.serve_local import IDENTITY_SUFFIX, free_port, identity, served_name
from recjudge.llm.shapes import check
from recjudge.prompts import render
from recjudge.prompts.output_shapes import output_shape

DEFINITION = ("A recommendation is serendipitous when the item is relevant to the user and also unexpected: the user "
              "would not have found it on their own, and it is a pleasant surprise.")
CASES = {"toy-story-alien": ("Toy Story (1995); Finding Nemo (2003); Up (2009)", "Alien (1979)"),
         "godfather-amelie": ("The Godfather (1972); Goodfellas (1990); Casino (1995)", "Amélie (2001)")}
REQUESTS = [JudgeRequest(key, render("likert_generic", aspect="serendipity", aspect_definition=DEFINITION,
                                     history=history, item=item))
            for key, (history, item) in CASES.items()]


def server_config(server, **role) -> JudgeConfig:
    """The server's judge in one role, as a chapter combines a reader's ``--judge`` with its own role."""
    return server.judge_spec().to_config(prompt="likert_generic", **role)


def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


@pytest.mark.local_model
def test_a_judgment_round_trips_through_the_server_and_replays_without_it(llama_server, tmp_path):
    config = server_config(llama_server, max_tokens=8)
    assert (config.provider, config.model, config.served_model, config.base_url) == (
        "openai", f"{DEFAULT_MODEL}{IDENTITY_SUFFIX}", DEFAULT_MODEL, llama_server.base_url)
    run = run_judge(config, REQUESTS, store=tmp_path, mode="live", progress=False)
    assert (run.report.n_replies, run.report.n_asked, run.report.n_failed) == (2, 2, 0)
    stored = {entry.request_key: entry for entry in ResponseStore(tmp_path)}  # read back from disk
    assert sorted(stored) == sorted(CASES)
    for row in run.table.itertuples():
        entry = stored[row.key]
        assert (entry.provider, entry.model) == ("openai", config.model)
        assert entry.text and entry.text == row.reply and 1 <= entry.output_tokens <= 8 and entry.input_tokens > 50
        assert entry.provenance == {"reported_model": DEFAULT_MODEL, "endpoint": llama_server.base_url}
        assert row.score == pytest.approx(parse_likert(entry.text), nan_ok=True)
    # The server gone (nothing listens at the base URL): the same judge replays every reply and asks nothing.
    gone = config.with_(base_url=dead_url())
    replay = run_judge(gone, REQUESTS, store=ResponseStore(tmp_path), progress=False)
    assert (replay.report.n_from_store, replay.report.n_asked, replay.report.n_provider_calls) == (2, 0, 0)
    assert replay.table["reply"].tolist() == run.table["reply"].tolist()
    assert replay.table["score"].equals(run.table["score"])
    replayed = run_judge(config, REQUESTS, store=ResponseStore(tmp_path), mode="replay", progress=False)
    assert replayed.table["reply"].tolist() == run.table["reply"].tolist()


@pytest.mark.local_model
def test_expected_scores_come_through_the_servers_logprobs(llama_server, tmp_path):
    config = server_config(llama_server, scoring="expected", max_tokens=1)
    run = run_judge(config, REQUESTS, store=tmp_path, mode="live", progress=False)
    assert run.report.n_failed == 0
    stored = {entry.request_key: entry for entry in ResponseStore(tmp_path)}
    for row in run.table.itertuples():
        logprobs = stored[row.key].logprobs
        assert logprobs is not None and len(logprobs) == 1 and len(logprobs[0]) >= 20  # top 20 (+ the chosen token)
        assert all(value <= 1e-6 for value in logprobs[0].values())
        assert math.isfinite(row.score) and 1 <= row.score <= 5
        assert row.score == pytest.approx(expected_score(logprobs))
    # The same weights in this process (provider "local") give the same distribution: the server's expected scores
    # are the model's, not an artefact of the OpenAI format. (Within 0.1: the server reuses the cached prompt prefix
    # without aligning it to batch boundaries; see recjudge.llm.serve_local.)
    local = JudgeConfig(provider="local", model=DEFAULT_MODEL, prompt="likert_generic", scoring="expected",
                        max_tokens=1)
    in_process = run_judge(local, REQUESTS, store=tmp_path / "local", mode="live", progress=False)
    assert in_process.table["score"].tolist() == pytest.approx(run.table["score"].tolist(), abs=0.1)


@pytest.mark.local_model
def test_a_constrained_judgment_through_the_server_conforms_to_its_shape(llama_server, tmp_path):
    # The server refuses OpenAI's json_schema form (HTTP 500, a validation error naming response_format); the
    # provider asks again with json_object + schema, which the server compiles to a grammar, and every reply conforms.
    shape = output_shape("likert_generic")
    config = server_config(llama_server, max_tokens=24).constrained(shape)
    run = run_judge(config, REQUESTS, store=tmp_path, mode="live", progress=False)
    assert (run.report.n_replies, run.report.n_failed) == (2, 0)
    for entry in ResponseStore(tmp_path):
        value, why = check(shape, entry.text)
        assert value is not None, why
        assert entry.provenance["response_format"] == "json_object with schema"
    assert run.table["score"].between(1, 5).all()


@pytest.mark.local_model
def test_the_server_is_refused_under_a_name_it_does_not_serve(llama_server, tmp_path):
    from recjudge.llm.providers.base import ProviderError

    config = server_config(llama_server).with_(served_model="qwen2.5-coder-1.5b-instruct-q4_k_m")
    with pytest.raises(ProviderError, match=f"not among the models {llama_server.base_url} serves "
                                            rf"\({DEFAULT_MODEL}\)"):
        run_judge(config, REQUESTS, store=tmp_path, progress=False)
    assert list(ResponseStore(tmp_path)) == []


MORE_CASES = {"heat-mary-poppins": ("Heat (1995); Ronin (1998); The Town (2010)", "Mary Poppins (1964)"),
              "notebook-terminator": ("The Notebook (2004); Titanic (1997); Ghost (1990)", "The Terminator (1984)"),
              "shrek-seven": ("Shrek (2001); Madagascar (2005); Ice Age (2002)", "Se7en (1995)"),
              "matrix-blade-runner": ("The Matrix (1999); Inception (2010); Dark City (1998)", "Blade Runner (1982)"),
              "annie-hall-rocky": ("Annie Hall (1977); Manhattan (1979); Zelig (1983)", "Rocky (1976)"),
              "psycho-frozen": ("Psycho (1960); Vertigo (1958); Rear Window (1954)", "Frozen (2013)")}
EIGHT_REQUESTS = REQUESTS + [
    JudgeRequest(key, render("likert_generic", aspect="serendipity", aspect_definition=DEFINITION, history=history,
                             item=item))
    for key, (history, item) in MORE_CASES.items()]


class InFlight:
    """Counts the requests a provider is answering at once (the most at any moment in ``peak``)."""

    def __init__(self, provider):
        self.complete, self.now, self.peak, self.lock = provider.complete, 0, 0, threading.Lock()
        provider.complete = self

    def __call__(self, *args, **kwargs):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            return self.complete(*args, **kwargs)
        finally:
            with self.lock:
                self.now -= 1


@pytest.mark.local_model
def test_requests_in_flight_at_once_get_the_keys_and_replies_of_one_at_a_time(llama_server, tmp_path):
    """Eight prompts asked with up to three requests in flight (the adaptive limit capped at 3, as
    RECJUDGE_LLM_CONCURRENCY=3 sets it) and one at a time: every judgment succeeds, and both runs store the same
    replies under the same keys (temperature 0), so how many requests are in flight changes nothing in the store.

    llama-cpp-python's server answers one completion at a time: every request holds its model behind one lock
    (``llama_outer_lock``/``llama_inner_lock`` in ``llama_cpp/server/app.py``), so the three requests the runner keeps
    open wait in the server's queue. The test shows that the runner fills such a server and copes with its queue (no
    timeout, no failure); it says nothing about speed, which only a server that batches requests (vLLM, llama.cpp's
    ``llama-server --parallel N``) gains from concurrency."""
    config = server_config(llama_server, max_tokens=8)
    runs, counted = {}, {}
    for concurrency in (1, 3):
        provider = get_provider(config)
        counted[concurrency] = InFlight(provider)
        runs[concurrency] = run_judge(config, EIGHT_REQUESTS, store=tmp_path / f"c{concurrency}", provider=provider,
                                      mode="live", concurrency=concurrency, progress=False)
        report = runs[concurrency].report
        assert (report.n_replies, report.n_asked, report.n_failed) == (8, 8, 0)
        assert report.concurrency["mode"] == "adaptive" and report.concurrency["cap"] == concurrency
    assert (counted[1].peak, counted[3].peak) == (1, 3)  # requests really open at once, not only allowed
    stored = {concurrency: {entry.key: (entry.request_key, entry.text)
                            for entry in ResponseStore(tmp_path / f"c{concurrency}")} for concurrency in (1, 3)}
    assert len(stored[1]) == 8 and stored[3] == stored[1]
    assert runs[3].table["reply"].tolist() == runs[1].table["reply"].tolist()


# ------------------------------------------------------------------------------------------------- the commands
def test_a_served_gguf_is_named_by_its_file_and_the_identity_says_where_it_is_served():
    assert served_name(DEFAULT_MODEL) == DEFAULT_MODEL
    assert served_name("/models/Qwen2.5-7B.Q4_K_M.gguf") == "Qwen2.5-7B.Q4_K_M"
    assert identity(DEFAULT_MODEL) == f"{DEFAULT_MODEL}@llama-cpp-server"


def serve(*arguments: str, tmp_path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "recjudge", "serve", *arguments], capture_output=True, text=True,
                          env=env, timeout=120)


def test_serve_stop_without_a_server_says_so(tmp_path):
    done = serve("stop", "--state", str(tmp_path / "none.json"), tmp_path=tmp_path)
    assert done.returncode == 0 and f"no server recorded in {tmp_path / 'none.json'}" in done.stderr


def test_serve_stop_never_signals_a_process_that_is_not_the_server(tmp_path):
    state = tmp_path / "server.json"
    state.write_text(f'{{"pid": {os.getpid()}, "base_url": "http://127.0.0.1:1/v1"}}')
    done = serve("stop", "--state", str(state), tmp_path=tmp_path)
    assert done.returncode == 1 and f"process {os.getpid()} is not a llama.cpp server" in done.stderr
    assert state.exists()


@pytest.mark.parametrize(("arguments", "message"), [
    (("--port", "70000"), "--port 70000: not a TCP port"),
    (("--timeout", "0"), "--timeout 0.0: must be a positive number"),
    (("--model", "nowhere.gguf"), "--model nowhere.gguf: local model file not found"),
])
def test_serve_start_names_the_option_it_cannot_use(tmp_path, arguments, message):
    done = serve("start", "--state", str(tmp_path / "s.json"), *arguments, tmp_path=tmp_path)
    assert done.returncode == 1 and message in done.stderr and done.stdout == ""
    assert not (tmp_path / "s.json").exists()


def test_serve_start_with_a_state_file_that_cannot_be_written_ends_in_one_line(tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder\n")
    for state, message in ((a_file / "serve.json", f"--state {a_file / 'serve.json'}: its folder cannot be written"),
                           (tmp_path, f"--state {tmp_path}: {tmp_path} is a folder")):
        done = serve("start", "--state", str(state), tmp_path=tmp_path)
        assert done.returncode == 2 and message in done.stderr and done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert a_file.read_text() == "not a folder\n"


@pytest.mark.local_model
def test_serve_start_prints_the_url_of_a_serving_server_and_stop_ends_it(llama_server_packages, tmp_path):
    import json
    import urllib.request

    from recjudge.llm.serve_local import _alive
    state = tmp_path / "server.json"
    started = serve("start", "--state", str(state), "--threads", "1", tmp_path=tmp_path)
    try:
        assert started.returncode == 0, started.stderr
        base_url = started.stdout.strip()
        recorded = json.loads(state.read_text())
        assert recorded["base_url"] == base_url and recorded["served_model"] == DEFAULT_MODEL
        assert f"--judge openai:{identity(DEFAULT_MODEL)} --base-url {base_url} --served-model {DEFAULT_MODEL}" \
            in started.stderr
        with urllib.request.urlopen(f"{base_url}/models", timeout=10) as response:
            assert [item["id"] for item in json.load(response)["data"]] == [DEFAULT_MODEL]
        again = serve("start", "--state", str(state), tmp_path=tmp_path)
        assert again.returncode == 1 and f"a server already runs at {base_url}" in again.stderr
        port = base_url.split(":")[-1].split("/")[0]
        taken = serve("start", "--state", str(tmp_path / "other.json"), "--port", port, tmp_path=tmp_path)
        assert taken.returncode == 1 and f"port {port} on 127.0.0.1 is in use already" in taken.stderr
    finally:
        stopped = serve("stop", "--state", str(state), tmp_path=tmp_path)
    assert stopped.returncode == 0 and not state.exists()
    assert not _alive(recorded["pid"])


@pytest.mark.local_model
@pytest.mark.parametrize("failure", ["exits", "too slow"])
def test_a_server_that_does_not_come_up_is_stopped_and_reported_with_its_log(llama_server_packages, tmp_path,
                                                                              failure):
    from recjudge.llm.serve_local import LocalServer, ServerError
    if failure == "exits":
        broken = tmp_path / "broken.gguf"
        broken.write_bytes(b"GGUF" + b"\0" * 12)
        server = LocalServer(str(broken), log=tmp_path / "server.log")
        expected = r"exited with status 1 before serving .*\n(.*\n)*ValueError: Failed to load model from file"
    else:
        server = LocalServer(log=tmp_path / "server.log", timeout_s=0.01)
        expected = rf"did not serve '{DEFAULT_MODEL}' at http://127\.0\.0\.1:\d+/v1/models within 0 s"
    with pytest.raises(ServerError, match=expected):
        server.start()
    assert server.process is None and (tmp_path / "server.log").is_file()


def test_serve_stop_with_an_ended_pid_says_no_server_was_running(tmp_path):
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    state = tmp_path / "server.json"
    state.write_text(f'{{"pid": {int(ended.stdout)}, "base_url": "http://127.0.0.1:1/v1"}}')
    done = serve("stop", "--state", str(state), tmp_path=tmp_path)
    assert done.returncode == 0 and "no server was running" in done.stderr and "stale state" in done.stderr
    assert "stopped the server" not in done.stderr and not state.exists()


def test_serve_start_with_a_pid_of_another_program_says_so_instead_of_pointing_at_stop(tmp_path):
    state = tmp_path / "server.json"
    state.write_text(f'{{"pid": {os.getpid()}, "base_url": "http://127.0.0.1:1/v1"}}')
    done = serve("start", "--state", str(state), tmp_path=tmp_path)
    assert done.returncode == 1 and f"names process {os.getpid()}, which is not a llama.cpp server" in done.stderr
    assert "already runs" not in done.stderr and "serve stop" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and state.exists()


def test_serve_start_never_deletes_a_file_it_did_not_write_beside_its_state(tmp_path):
    notes = tmp_path / "notes.log"
    notes.write_text("my own notes\n")
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"GGUF" + b"\0" * 12)
    done = serve("start", "--state", str(tmp_path / "notes.txt"), "--model", str(fake), "--timeout", "5",
                 tmp_path=tmp_path)
    assert notes.read_text() == "my own notes\n"
    assert done.returncode == 2 and f"{notes} exists and was not written by recjudge serve" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "notes.txt").exists()
