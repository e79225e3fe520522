"""A server that answers with a redirect: never followed (a redirected POST turns into a GET and fails later with a
misleading 404); the job stops with one configuration error naming where the server points."""

from __future__ import annotations

import http.server
import threading

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
