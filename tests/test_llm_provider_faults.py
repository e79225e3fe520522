"""A server that answers with a redirect: never followed (a redirected POST turns into a GET and fails later with a
misleading 404); the job stops with one configuration error naming where the server points."""

from __future__ import annotations

import http.server
import threading
import time

import pytest

from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
from recjudge.llm.providers.base import ProviderError


class _Redirecting(http.server.BaseHTTPRequestHandler):
    requests_seen = 0

    def _redirect(self) -> None:
        type(self).requests_seen += 1
        self.send_response(301)
        self.send_header("Location", "https://elsewhere.example/v1" + self.path.removeprefix("/v1"))
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _redirect

    def log_message(self, *args) -> None:
        pass


def test_a_redirect_stops_the_job_with_the_location_named(tmp_path, monkeypatch):
    monkeypatch.delenv("RECJUDGE_SERVER_API_KEY", raising=False)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Redirecting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        requests = [JudgeRequest(f"k{i}", [{"role": "user", "content": f"prompt {i}"}]) for i in range(6)]
        config = JudgeConfig(provider="openai", model="judge@test-server", served_model="judge", base_url=base_url)
        with pytest.raises(ProviderError, match="HTTP 301: the server redirects to https://elsewhere.example/v1"):
            run_judge(config, requests, store=tmp_path, progress=False, mode="live")
    finally:
        server.shutdown()
    assert _Redirecting.requests_seen == 1  # stopped before any prompt was sent


def test_a_trickling_anthropic_body_is_cut_at_the_request_deadline(tmp_path, monkeypatch):
    from mock_openai_server import FaultPlan, MockOpenAIServer

    from recjudge.llm import RetryPolicy

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    plan = FaultPlan(trickle=1.0, max_faults_per_prompt=1)
    # A 30 s trickle against a 2 s deadline: the job ends long before the body would, however busy the machine.
    with MockOpenAIServer(faults=plan, trickle_interval_s=1.0, trickle_chunks=30) as server:
        config = JudgeConfig(provider="anthropic", model="claude-sonnet-4-6", base_url=server.root_url)
        started = time.perf_counter()
        run = run_judge(config, [JudgeRequest("k0", [{"role": "user", "content": "prompt 0"}])], store=tmp_path,
                        retry=RetryPolicy(base_delay_s=0.01), timeout=2.0, progress=False)
        seconds = time.perf_counter() - started
        assert server.fault_counts["trickle"] == 1
    assert run.report.n_replies == 1 and run.report.n_retries == 1  # cut, retried, answered
    assert seconds < 20.0, f"a 30 s trickle held the job {seconds:.1f} s with a 2 s deadline"


class _TricklingHeaders(http.server.BaseHTTPRequestHandler):
    """Sends its status line and headers one byte every 0.3 s (about 20 s in all): each read is quick, the whole
    is not."""

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"x" * 40 + b"\r\n"
        try:
            for byte in head:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.3)
        except OSError:
            pass

    do_GET = do_POST

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_trickled_response_headers_are_cut_at_the_request_deadline(provider, monkeypatch):
    from recjudge.llm.providers import get_provider
    from recjudge.llm.providers.base import TransientProviderError

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _TricklingHeaders)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        root = f"http://127.0.0.1:{server.server_address[1]}"
        config = JudgeConfig(provider=provider, model="judge@trickle" if provider == "openai" else "claude-x",
                             base_url=root + "/v1" if provider == "openai" else root)
        judge = get_provider(config, timeout=2.0)
        started = time.perf_counter()
        with pytest.raises(TransientProviderError, match="deadline"):
            judge.complete([{"role": "user", "content": "x"}], model="judge", temperature=0.0, max_tokens=1)
        seconds = time.perf_counter() - started
    finally:
        server.shutdown()
    assert seconds < 6.0, f"headers trickled over ~20 s held the request {seconds:.1f} s with a 2 s deadline"
