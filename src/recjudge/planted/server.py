"""The planted judges' OpenAI-compatible server on loopback: the reader's path, unchanged, asks a judge whose effects
are known.

``recjudge planted serve`` builds the key from the data (:mod:`recjudge.planted.key`; a minute or so), then answers
``POST /v1/chat/completions`` for any model named ``planted-<value>-<seed>[-<member>]``
(:class:`recjudge.planted.judge.PlantedName`) until it is stopped::

    .venv/bin/recjudge planted serve --port 8766 &
    RECJUDGE_STORE=/tmp/planted-store .venv/bin/recjudge run --judge openai:planted-paper-0 \\
        --base-url http://127.0.0.1:8766/v1 --profile check

It reads only the messages (and the model's name), answers as :meth:`PlantedJudge.answer` does, and gives the reply
token's log-probability when asked (probability 1: the expected score is the integer). ``GET /v1/models`` is not
served (404), like servers that do not list their models. A prompt it cannot read is answered 3 and counted
(``unread``, by template). Replies go wherever the run's store is: give the run a store of its own
(``RECJUDGE_STORE``), so that the committed ``data/llm`` is never written.

:class:`PlantedServer` is the same server for Python (a context manager: the tests and the operating-characteristic
check use it).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from recjudge.planted.judge import PlantedJudge, PlantedName
from recjudge.planted.key import PlantedKey
from recjudge.planted.reading import UNKNOWN, read_messages

HOST = "127.0.0.1"
#: The largest request body read (a paper-scale few-shot prompt is a few kB).
MAX_REQUEST_BYTES = 4 * 1024 * 1024


class PlantedServer:
    """The server on ``HOST``: ``with PlantedServer(key) as server: server.base_url``. ``key``: the truth it holds
    (built on first use when not built yet); ``port`` 0 picks a free one."""

    def __init__(self, key: PlantedKey | None = None, port: int = 0, host: str = HOST):
        self.key = key if key is not None else PlantedKey()
        self.judges: dict[str, PlantedJudge] = {}
        self.lock = threading.Lock()
        self.requests = 0
        self.unread: Counter[str] = Counter()
        self.httpd = ThreadingHTTPServer((host, port), self._handler())
        self.httpd.daemon_threads = True
        self.thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def judge(self, value: str) -> PlantedJudge:
        with self.lock:
            if value not in self.judges:
                self.judges[value] = PlantedJudge(self.key, value)
            return self.judges[value]

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The status and JSON body answering one chat-completion request."""
        name = PlantedName.parse(str(body.get("model", "")))
        if name is None:
            return 404, {"error": {"message": f"no planted judge is named {str(body.get('model'))[:80]!r}: planted "
                                              "judges are named planted-<null|paper|number>-<seed>[-<member>]",
                                   "type": "invalid_request_error", "code": "model_not_found"}}
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            return 400, {"error": {"message": "messages must be a list of objects", "type": "invalid_request_error"}}
        reading = read_messages(messages)
        answer = self.judge(name.value).answer(reading, name.seed, name.member)
        with self.lock:
            self.requests += 1
            if not answer.read:
                self.unread[reading.template if reading.template != UNKNOWN else "(no template)"] += 1
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": answer.text},
                                  "finish_reason": "stop"}
        if body.get("logprobs"):
            choice["logprobs"] = {"content": [{"token": answer.text, "logprob": 0.0,
                                               "top_logprobs": [{"token": answer.text, "logprob": 0.0}]}]}
        prompt_tokens = max(1, sum(len(str(m.get("content", ""))) for m in messages) // 4)  # about 4 characters each
        reply_tokens = len(answer.text) // 4 + 1
        return 200, {"id": f"{name}-{self.requests}", "object": "chat.completion", "created": 0, "model": str(name),
                     "choices": [choice], "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": reply_tokens,
                                                    "total_tokens": prompt_tokens + reply_tokens}}

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet: a run sends thousands of requests
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self._send(404, {"error": {"message": "not served", "type": "invalid_request_error"}})

            def do_POST(self) -> None:  # noqa: N802
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"not served: {self.path[:80]}"}})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                if not 0 < length <= MAX_REQUEST_BYTES:
                    self._send(400, {"error": {"message": "a request body of 1 byte to 4 MB is needed"}})
                    return
                try:
                    body = json.loads(self.rfile.read(length))
                except (ValueError, UnicodeDecodeError):
                    self._send(400, {"error": {"message": "the request body is no JSON"}})
                    return
                self._send(*server.reply(body if isinstance(body, dict) else {}))

        return Handler

    def start(self) -> PlantedServer:
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="planted-server", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self.thread is not None:
            self.thread.join(timeout=10)

    def __enter__(self) -> PlantedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(args: argparse.Namespace) -> int:
    """Build the key, print the base URL, answer until stopped (Ctrl-C or SIGTERM)."""
    key = PlantedKey()
    print("recjudge planted serve: building the key from the data (Serendipity-2018, the re-evaluation's lists, "
          "Lu et al.'s explanations) ...", file=sys.stderr, flush=True)
    for part in ("serendipity", "recsys", "explanations"):
        getattr(key, part)
    server = PlantedServer(key, port=args.port)
    print(server.base_url, flush=True)
    print("recjudge planted serve: ready; ask a judge named planted-<null|paper|number>-<seed>[-<member>], e.g. "
          f"--judge openai:planted-paper-0 --base-url {server.base_url}", file=sys.stderr, flush=True)
    try:
        server.httpd.serve_forever()
    finally:
        server.httpd.server_close()
        if server.unread:
            print(f"recjudge planted serve: {sum(server.unread.values())} of {server.requests} prompts not read "
                  f"(answered 3): {dict(server.unread)}", file=sys.stderr)
    return 0
