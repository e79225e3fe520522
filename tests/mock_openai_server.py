"""A loopback mock of the OpenAI chat-completions endpoint (and of Anthropic's /v1/messages), with injectable
faults, for tests and benchmarks.

It listens on 127.0.0.1 on an ephemeral port, serves requests concurrently (one thread each), and answers
deterministically from the prompt (the last user message): ``expected_score(prompt)`` in 1..5, reply text
"Score: <n>".  With ``logprobs`` requested it returns top alternatives giving the score token probability 0.6 and
each other score 0.1, so the expected score is 0.5 * n + 1.5.

Faults are decided deterministically from (prompt, how many times this prompt was already requested): for the
first ``max_faults_per_prompt`` requests of a prompt, a fault of each kind happens with the configured rate; later
requests always succeed.  Kinds: 429 with Retry-After, 500, timeout (sleep ``timeout_sleep_s`` then drop the
connection without a reply), dropped connection, garbage body (HTTP 200 with invalid JSON), truncated body (fewer
bytes than Content-Length, then the connection closes), trickle (a valid body sent one chunk every
``trickle_interval_s``).

Odd replies are configured per prompt (``reply_variants``: prompt -> variant) and happen on every request of that
prompt; see ``REPLY_VARIANTS``.  ``served_models`` (a list of ids) makes ``GET /v1/models`` answer with that list;
None (default) answers 404 there, like servers that do not list their models.

Rate limit (optional): ``rate_limit_rps`` requests per second with a token bucket of ``burst`` requests (full at
start).  A completion request arriving when the bucket is empty is answered at once with 429 and the time until
the next token in ``retry-after-ms`` (and ``Retry-After``, in whole seconds, rounded up), like OpenAI's API; it is
counted in ``throttled`` and not in ``requests_by_prompt``.

Batch APIs: OpenAI's (``POST /v1/files`` with ``purpose=batch``, ``POST /v1/batches``, ``GET /v1/batches/{id}``,
``GET /v1/files/{id}/content``) and Anthropic's Message Batches (``POST /v1/messages/batches``, ``GET
/v1/messages/batches/{id}`` and ``.../results``).  A batch ends at its ``batch_polls_to_end``-th status request;
requests whose prompt is in ``batch_failing_prompts`` fail (an error line / an ``errored`` result); with
``batch_expire_after=n`` the batch expires after its first n requests (the rest are reported expired).  Counted in
``batch_submissions`` and ``batch_requests``.

Quota: with ``quota_after=n`` every completion request after the first n is answered 429 ``insufficient_quota``, as
OpenAI answers an account out of credit.

Counters (thread-safe): ``requests_by_prompt`` (every request), ``successes_by_prompt`` (complete 200 replies
sent), ``abandoned_by_prompt`` (replies ready only after the client had hung up: it gave up waiting, so the reply
is not sent and not counted a success), ``faults`` (count per kind), ``throttled`` (429s from the rate limit).
"""

from __future__ import annotations

import hashlib
import json
import math
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULT_KINDS = ("rate_limit", "server_error", "timeout", "drop", "garbage", "truncated", "trickle")
#: Per-prompt odd 200 replies.  The first group is a usable reply in an odd shape (stored, normalised); the second
#: holds no usable reply (a failed judgment).
ODD_BUT_USABLE = ("surrogate", "nan_usage", "content_list", "content_dict", "usage_strings", "usage_huge",
                  "usage_fraction", "huge")
UNUSABLE = ("empty_choices", "error_object", "html", "no_message")
REPLY_VARIANTS = ODD_BUT_USABLE + UNUSABLE
#: Size of the "huge" reply's text.
HUGE_REPLY_CHARS = 50_000_000


def expected_score(prompt: str) -> int:
    """The score the mock gives a prompt (1..5)."""
    return 1 + int(hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8], 16) % 5


def _uniform(prompt: str, attempt: int) -> float:
    digest = hashlib.sha256(f"fault|{attempt}|{prompt}".encode("utf-8")).hexdigest()
    return int(digest[:12], 16) / float(16**12)


@dataclass
class FaultPlan:
    """Rates (fractions of the first requests of each prompt) of each fault kind; they must sum to <= 1."""

    rate_limit: float = 0.0
    server_error: float = 0.0
    timeout: float = 0.0
    drop: float = 0.0
    garbage: float = 0.0
    truncated: float = 0.0
    trickle: float = 0.0
    max_faults_per_prompt: int = 2
    retry_after: str = "0"  # value of the Retry-After header sent with 429 (seconds)

    def fault_for(self, prompt: str, attempt: int) -> str | None:
        if attempt >= self.max_faults_per_prompt:
            return None
        u = _uniform(prompt, attempt)
        edge = 0.0
        for kind in FAULT_KINDS:
            edge += getattr(self, kind)
            if u < edge:
                return kind
        return None


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` stored (full at start); thread-safe."""

    def __init__(self, rate: float, burst: float, clock=time.monotonic):
        self.rate, self.burst, self.clock = float(rate), float(burst), clock
        self.tokens = float(burst)
        self.stamp = clock()
        self.lock = threading.Lock()

    def take(self) -> float:
        """0.0 when a token was taken, else the seconds until one is available (nothing taken)."""
        with self.lock:
            now = self.clock()
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return 0.0
            return (1.0 - self.tokens) / self.rate


class MockOpenAIServer:
    """Context manager: ``with MockOpenAIServer(latency_s=0.1) as server: server.base_url``."""

    def __init__(self, latency_s: float = 0.0, faults: FaultPlan | None = None, timeout_sleep_s: float = 1.0,
                 expected_key: str | None = None, reply_variants: dict[str, str] | None = None,
                 served_models: list[str] | None = None, reported_model: str | None = None,
                 trickle_interval_s: float = 1.0, trickle_chunks: int = 12, huge_reply_chars: int = HUGE_REPLY_CHARS,
                 rate_limit_rps: float | None = None, burst: float | None = None, batch_polls_to_end: int = 1,
                 batch_failing_prompts: set[str] | None = None, batch_expire_after: int | None = None,
                 shape_support: str = "honour", quota_after: int | None = None):
        self.latency_s = latency_s
        # After this many completion requests, every one is answered 429 insufficient_quota (OpenAI's "out of credit").
        self.quota_after = quota_after
        self.completions = 0
        # Structured output (OpenAI response_format / Anthropic forced tool): "honour" answers an instance of the
        # schema, "ignore" answers free text as if the request had none, "reject" answers 400 like a server
        # without structured outputs, "json_object" refuses the json_schema form with a 500 naming response_format
        # and honours json_object + schema (llama-cpp-python's server).  Every completion request body is kept in
        # ``payloads``.
        assert shape_support in ("honour", "ignore", "reject", "json_object")
        self.shape_support = shape_support
        self.payloads: list[dict[str, Any]] = []
        self.batch_polls_to_end = batch_polls_to_end
        self.batch_failing_prompts = set(batch_failing_prompts or ())
        self.batch_expire_after = batch_expire_after
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_submissions = 0
        self.batch_requests = 0
        self.bucket = None if not rate_limit_rps else TokenBucket(
            rate_limit_rps, burst if burst is not None else max(1.0, rate_limit_rps / 10))
        self.throttled = 0
        self.faults = faults or FaultPlan()
        self.timeout_sleep_s = timeout_sleep_s
        self.expected_key = expected_key
        self.reply_variants = dict(reply_variants or {})
        unknown = set(self.reply_variants.values()) - set(REPLY_VARIANTS)
        assert not unknown, f"unknown reply variants {unknown}"
        self.served_models = served_models
        self.reported_model = reported_model  # the "model" field of replies (default: the model asked)
        self.trickle_interval_s = trickle_interval_s
        self.trickle_chunks = trickle_chunks
        self.huge_reply_chars = huge_reply_chars
        self.models_requests = 0
        self.lock = threading.Lock()
        self.requests_by_prompt: Counter[str] = Counter()
        self.successes_by_prompt: Counter[str] = Counter()
        self.abandoned_by_prompt: Counter[str] = Counter()
        self.fault_counts: Counter[str] = Counter()
        self.unauthorised = 0
        self.stopped = False
        #: connections clients opened (a client that keeps its connections alive opens about as many as it runs at once)
        self.connections = 0
        #: the monotonic clock (system-wide on Linux) when each model's first completion request arrived, appended to
        #: ``arrivals_file`` as "<model> <seconds>" lines when one is given (benchmarks: a client's first-request delay)
        self.first_arrivals: dict[str, float] = {}
        self.arrivals_file: str | None = None
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------------------------------- lifecycle
    def start(self) -> "MockOpenAIServer":
        mock = self

        class Handler(_Handler):
            server_mock = mock

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        server.request_queue_size = 256
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        # Like a server process that ends: connections kept alive are dropped too, and new ones are refused.
        self.stopped = True
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "MockOpenAIServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def root_url(self) -> str:
        """Base URL without the /v1 suffix (what the anthropic client expects)."""
        return self.base_url[: -len("/v1")]

    def note_arrival(self, model: str) -> None:
        now = time.monotonic()
        with self.lock:
            if model in self.first_arrivals:
                return
            self.first_arrivals[model] = now
            if self.arrivals_file:
                with open(self.arrivals_file, "a", encoding="utf-8") as log:
                    log.write(f"{model} {now!r}\n")

    def reset_counters(self) -> None:
        with self.lock:
            self.requests_by_prompt.clear()
            self.successes_by_prompt.clear()
            self.abandoned_by_prompt.clear()
            self.fault_counts.clear()
            self.throttled = 0

    @property
    def total_requests(self) -> int:
        with self.lock:
            return sum(self.requests_by_prompt.values())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like real servers
    server_mock: MockOpenAIServer

    def setup(self) -> None:
        super().setup()
        with self.server_mock.lock:
            self.server_mock.connections += 1
        # Without this, headers and body leave in two segments and Nagle + delayed ACK add ~40 ms per reply.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        headers = dict(headers or {})
        self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _client_hung_up(self) -> bool:
        """Whether the client has closed its end (it stopped waiting for this reply): end of file is pending."""
        try:
            return self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, InterruptedError):
            return False  # nothing to read: the client is still waiting
        except OSError:
            return True  # reset by the client

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do_GET(self) -> None:  # noqa: N802
        mock = self.server_mock
        if mock.stopped:
            self._drop()
            return
        path = self.path.split("?")[0].rstrip("/")
        parts = path.split("/")
        if "/messages/batches/" in path:
            batch_id = parts[parts.index("batches") + 1]
            if batch_id not in mock.batches:
                self._send(404, b'{"type": "error", "error": {"type": "not_found_error", "message": "no batch"}}')
            elif path.endswith("/results"):
                self._send(200, _batch_results(mock, batch_id), {"Content-Type": "application/binary"})
            else:
                self._send(200, json.dumps(_batch_status(mock, batch_id, self.headers.get("Host"))).encode())
            return
        if "/batches/" in path:
            batch_id = parts[-1]
            if batch_id not in mock.batches:
                self._send(404, b'{"error": {"message": "no such batch"}}')
            else:
                self._send(200, json.dumps(_batch_status(mock, batch_id, None)).encode())
            return
        if "/files/" in path and path.endswith("/content"):
            file_id = parts[-2]
            if file_id not in mock.files:
                self._send(404, b'{"error": {"message": "no such file"}}')
            else:
                self._send(200, mock.files[file_id], {"Content-Type": "application/octet-stream"})
            return
        with mock.lock:
            mock.models_requests += 1
        if self.path.rstrip("/").endswith("/models") and mock.served_models is not None:
            body = {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "mock"}
                                               for m in mock.served_models]}
            self._send(200, json.dumps(body).encode("utf-8"))
            return
        self._send(404, b'{"error": {"message": "not found"}}')

    def _send_trickle(self, body: bytes, chunks: int, interval: float) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.flush()
        step = max(1, -(-len(body) // chunks))
        try:
            for start in range(0, len(body), step):
                self.wfile.write(body[start:start + step])
                self.wfile.flush()
                time.sleep(interval)
        except OSError:  # the client gave up
            self.close_connection = True

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        mock = self.server_mock
        if mock.stopped:
            self._drop()
            return
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/files") or path.endswith("/batches"):
            self._send(200, json.dumps(_create_batch_or_file(mock, path, raw, self.headers)).encode())
            return
        payload = json.loads(raw or b"{}")
        anthropic_style = self.path.rstrip("/").endswith("/v1/messages")
        if not (anthropic_style or self.path.rstrip("/").endswith("/chat/completions")):
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        mock.note_arrival(str(payload.get("model")))
        if payload.get("model") == "status-400":
            self._send(400, b'{"error": {"message": "bad request", "type": "invalid_request_error"}}')
            return
        with mock.lock:
            mock.payloads.append(payload)
        shaped = payload.get("response_format") or payload.get("tool_choice")
        if shaped and mock.shape_support == "reject":
            self._send(400, b'{"error": {"message": "response_format is not supported by this server", '
                            b'"type": "invalid_request_error"}}')
            return
        if mock.shape_support == "json_object" and (payload.get("response_format") or {}).get("type") == "json_schema":
            refusal = ("1 validation error: {'loc': ('body', 'response_format', 'type'), "
                       "'msg': \"Input should be 'text' or 'json_object'\"}")
            self._send(500, json.dumps({"error": {"message": refusal, "type": "internal_server_error"}}).encode())
            return
        # OpenAI clients send "Authorization: Bearer <key>"; Anthropic clients "x-api-key" (older) or the same bearer.
        sent = {self.headers.get("Authorization"), f"Bearer {self.headers.get('x-api-key')}"}
        if mock.expected_key is not None and f"Bearer {mock.expected_key}" not in sent:
            with mock.lock:
                mock.unauthorised += 1
            self._send(401, b'{"error": {"message": "invalid key"}}')
            return
        if mock.quota_after is not None:
            with mock.lock:
                mock.completions += 1
                exhausted = mock.completions > mock.quota_after
            if exhausted:
                self._send(429, json.dumps({"error": {
                    "message": "You exceeded your current quota, please check your plan and billing details.",
                    "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}).encode())
                return
        if mock.bucket is not None:
            wait = mock.bucket.take()
            if wait:
                with mock.lock:
                    mock.throttled += 1
                self._send(429, b'{"error": {"message": "rate limit reached", "type": "requests"}}',
                           {"retry-after-ms": str(max(1, math.ceil(wait * 1000))),
                            "Retry-After": str(max(1, math.ceil(wait)))})
                return
        users = [m.get("content", "") for m in payload.get("messages", []) if m.get("role") == "user"]
        prompt = users[-1] if users else ""
        with mock.lock:
            attempt = mock.requests_by_prompt[prompt]
            mock.requests_by_prompt[prompt] += 1
        fault = mock.faults.fault_for(prompt, attempt)
        if fault:
            with mock.lock:
                mock.fault_counts[fault] += 1
        if mock.latency_s:
            time.sleep(mock.latency_s)
        if fault == "rate_limit":
            self._send(429, b'{"error": {"message": "rate limited", "type": "rate_limit"}}',
                       {"Retry-After": mock.faults.retry_after})
            return
        if fault == "server_error":
            self._send(500, b'{"error": {"message": "internal error"}}')
            return
        if fault == "timeout":
            time.sleep(mock.timeout_sleep_s)
            self._drop()
            return
        if fault == "drop":
            self._drop()
            return
        if fault == "garbage":
            self._send(200, b'{"id": "chatcmpl-x", "choices": [ {"mess')
            return
        if anthropic_style:
            body = _anthropic_message(payload, prompt)
        else:
            body = _completion(payload, prompt)
            if mock.reported_model is not None:
                body["model"] = mock.reported_model
        if shaped and mock.shape_support in ("honour", "json_object"):
            _answer_in_shape(body, payload, expected_score(prompt))
        variant = None if anthropic_style else mock.reply_variants.get(prompt)
        if variant == "html":
            page = b"<!DOCTYPE html><html><body><h1>Please log in</h1></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            self.wfile.flush()
            return
        if variant is not None:
            body = _odd(body, variant, expected_score(prompt), mock.huge_reply_chars)
        data = json.dumps(body).encode("utf-8")  # NaN is written as NaN, a lone surrogate as \udXXX
        if fault == "truncated":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self._drop()
            return
        if fault == "trickle":
            self._send_trickle(data, mock.trickle_chunks, mock.trickle_interval_s)
            return
        if self._client_hung_up():  # a reply past the client's deadline (a loaded machine): nobody receives it
            with mock.lock:
                mock.abandoned_by_prompt[prompt] += 1
            self._drop()
            return
        self._send(200, data)
        with mock.lock:
            mock.successes_by_prompt[prompt] += 1


def _odd(body: dict[str, Any], variant: str, score: int, huge_chars: int = HUGE_REPLY_CHARS) -> dict[str, Any]:
    """The completion ``body`` reshaped as one of the odd replies of ``REPLY_VARIANTS``."""
    message = body["choices"][0]["message"]
    usage = body["usage"]
    if variant == "surrogate":
        message["content"] = f"Score: {score} \ud83d"  # an emoji cut in half
    elif variant == "nan_usage":
        usage["prompt_tokens"] = float("nan")
    elif variant == "content_list":
        message["content"] = [{"type": "text", "text": "Score: "}, {"type": "text", "text": str(score)}]
    elif variant == "content_dict":
        message["content"] = {"type": "text", "text": f"Score: {score}"}
    elif variant == "usage_strings":
        usage["prompt_tokens"], usage["completion_tokens"] = str(usage["prompt_tokens"]), "three"
    elif variant == "usage_huge":
        usage["prompt_tokens"] = 10**30
    elif variant == "usage_fraction":
        usage["completion_tokens"] = 2.5
    elif variant == "huge":
        message["content"] = f"Score: {score} " + "x" * huge_chars
    elif variant == "empty_choices":
        body["choices"] = []
    elif variant == "error_object":
        return {"error": {"message": "model overloaded", "type": "server_error"}}
    elif variant == "no_message":
        body["choices"] = [{"index": 0, "finish_reason": "stop"}]
    return body


def _last_user(messages: list[dict[str, Any]]) -> str:
    users = [m.get("content", "") for m in messages if m.get("role") == "user"]
    return users[-1] if users else ""


def _create_batch_or_file(mock: MockOpenAIServer, path: str, raw: bytes, headers: Any) -> dict[str, Any]:
    now = int(time.time())
    with mock.lock:
        if path.endswith("/files"):  # multipart upload: purpose and file
            from email.parser import BytesParser
            from email.policy import HTTP

            message = BytesParser(policy=HTTP).parsebytes(
                b"Content-Type: " + headers.get("Content-Type", "").encode() + b"\r\n\r\n" + raw)
            content = next(part.get_payload(decode=True) for part in message.iter_parts()
                           if part.get_param("name", header="content-disposition") == "file")
            file_id = f"file-{len(mock.files) + 1}"
            mock.files[file_id] = content
            return {"id": file_id, "object": "file", "bytes": len(content), "created_at": now,
                    "filename": "batch.jsonl", "purpose": "batch", "status": "processed"}
        payload = json.loads(raw or b"{}")
        mock.batch_submissions += 1
        if path.endswith("/messages/batches"):
            batch_id = f"msgbatch_{len(mock.batches) + 1:04d}"
            requests = [(r["custom_id"], r["params"]) for r in payload["requests"]]
            mock.batches[batch_id] = {"style": "anthropic", "requests": requests, "polls": 0}
        else:
            lines = [json.loads(line) for line in mock.files[payload["input_file_id"]].decode().splitlines() if line]
            batch_id = f"batch_{len(mock.batches) + 1:04d}"
            mock.batches[batch_id] = {"style": "openai", "requests": [(x["custom_id"], x["body"]) for x in lines],
                                      "polls": 0, "input_file_id": payload["input_file_id"]}
        mock.batch_requests += len(mock.batches[batch_id]["requests"])
    return _batch_status(mock, batch_id, headers.get("Host"), poll=False)


def _batch_outcomes(mock: MockOpenAIServer, batch: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(custom_id, "succeeded" | "errored" | "expired", body) per request, in submission order."""
    outcomes = []
    for index, (custom_id, body) in enumerate(batch["requests"]):
        prompt = _last_user(body.get("messages", []))
        if mock.batch_expire_after is not None and index >= mock.batch_expire_after:
            outcomes.append((custom_id, "expired", body))
        elif prompt in mock.batch_failing_prompts:
            outcomes.append((custom_id, "errored", body))
        else:
            outcomes.append((custom_id, "succeeded", body))
    return outcomes


def _batch_status(mock: MockOpenAIServer, batch_id: str, host: str | None, poll: bool = True) -> dict[str, Any]:
    with mock.lock:
        batch = mock.batches[batch_id]
        if poll:
            batch["polls"] += 1
        ended = batch["polls"] >= mock.batch_polls_to_end
        outcomes = _batch_outcomes(mock, batch)
        counts = Counter(kind for _, kind, _ in outcomes)
        if batch["style"] == "anthropic":
            return {
                "id": batch_id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
                "request_counts": {"processing": 0 if ended else len(outcomes),
                                   "succeeded": counts["succeeded"] if ended else 0,
                                   "errored": counts["errored"] if ended else 0, "canceled": 0,
                                   "expired": counts["expired"] if ended else 0},
                "created_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-02T00:00:00Z",
                "ended_at": "2026-01-01T01:00:00Z" if ended else None, "cancel_initiated_at": None,
                "archived_at": None,
                "results_url": f"http://{host}/v1/messages/batches/{batch_id}/results" if ended else None,
            }
        status = {"id": batch_id, "object": "batch", "endpoint": "/v1/chat/completions",
                  "input_file_id": batch["input_file_id"], "completion_window": "24h", "created_at": 0,
                  "status": "in_progress", "output_file_id": None, "error_file_id": None,
                  "request_counts": {"total": len(outcomes), "completed": 0, "failed": 0}}
        if not ended:
            return status
        if "output_file_id" not in batch:
            output, failed = [], []
            for custom_id, kind, body in outcomes:
                if kind == "succeeded":
                    output.append({"id": f"req-{custom_id[:8]}", "custom_id": custom_id, "error": None,
                                   "response": {"status_code": 200, "request_id": "r",
                                                "body": _completion(body, _last_user(body["messages"]))}})
                elif kind == "errored":
                    failed.append({"id": f"req-{custom_id[:8]}", "custom_id": custom_id, "error": None,
                                   "response": {"status_code": 400, "request_id": "r", "body": {"error": {
                                       "message": "invalid request", "type": "invalid_request_error"}}}})
                else:
                    failed.append({"id": f"req-{custom_id[:8]}", "custom_id": custom_id, "response": None,
                                   "error": {"code": "batch_expired", "message": "not executed before the "
                                                                                "completion window expired"}})
            for name, lines in (("output_file_id", output), ("error_file_id", failed)):
                if lines:
                    file_id = f"file-{len(mock.files) + 1}"
                    mock.files[file_id] = "".join(json.dumps(line) + "\n" for line in lines).encode()
                    batch[name] = file_id
                else:
                    batch[name] = None
        status.update(status="expired" if counts["expired"] else "completed",
                      output_file_id=batch["output_file_id"], error_file_id=batch["error_file_id"],
                      request_counts={"total": len(outcomes), "completed": counts["succeeded"],
                                      "failed": counts["errored"] + counts["expired"]})
        return status


def _batch_results(mock: MockOpenAIServer, batch_id: str) -> bytes:
    with mock.lock:
        lines = []
        for custom_id, kind, params in _batch_outcomes(mock, mock.batches[batch_id]):
            if kind == "succeeded":
                result = {"type": "succeeded", "message": _anthropic_message(params, _last_user(params["messages"]))}
            elif kind == "errored":
                result = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "invalid_request_error", "message": "invalid request"}}}
            else:
                result = {"type": "expired"}
            lines.append(json.dumps({"custom_id": custom_id, "result": result}))
        return ("\n".join(lines) + "\n").encode()


def instance_of(schema: dict[str, Any], score: int) -> Any:
    """A value conforming to ``schema`` (the shapes of ``recjudge.llm.shapes``): integer enums give ``score`` when
    allowed, strings "reasoning" or the first allowed label, arrays ``minItems`` such items."""
    kind = schema.get("type")
    if kind == "object":
        return {name: instance_of(sub, score) for name, sub in schema["properties"].items()}
    if kind == "array":
        return [instance_of(schema["items"], score) for _ in range(schema.get("minItems", 1))]
    if "enum" in schema:
        return score if score in schema["enum"] else schema["enum"][0]
    return score if kind == "integer" else "reasoning"


def _answer_in_shape(body: dict[str, Any], payload: dict[str, Any], score: int) -> None:
    if "response_format" in payload:
        form = payload["response_format"]
        schema = form["schema"] if form["type"] == "json_object" else form["json_schema"]["schema"]
        body["choices"][0]["message"]["content"] = json.dumps(instance_of(schema, score))
    else:
        tool = next(t for t in payload["tools"] if t["name"] == payload["tool_choice"]["name"])
        body["content"] = [{"type": "tool_use", "id": "toolu_mock", "name": tool["name"],
                            "input": instance_of(tool["input_schema"], score)}]
        body["stop_reason"] = "tool_use"


def _anthropic_message(payload: dict[str, Any], prompt: str) -> dict[str, Any]:
    return {
        "id": "msg_mock", "type": "message", "role": "assistant", "model": payload.get("model", "mock"),
        "content": [{"type": "text", "text": f"Score: {expected_score(prompt)}"}],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": len(prompt.split()) + 5 + len(payload.get("system", "").split()), "output_tokens": 3},
    }


def _completion(payload: dict[str, Any], prompt: str) -> dict[str, Any]:
    score = expected_score(prompt)
    tokens = ["Score", ":", f" {score}"]
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": "".join(tokens)},
        "finish_reason": "stop",
        "logprobs": None,
    }
    if payload.get("logprobs"):
        import math

        content = []
        for token in tokens[:2]:
            content.append({"token": token, "logprob": -0.01, "bytes": None,
                            "top_logprobs": [{"token": token, "logprob": -0.01, "bytes": None}]})
        alternatives = [{"token": f" {k}", "logprob": math.log(0.6 if k == score else 0.1), "bytes": None}
                        for k in range(1, 6)]
        alternatives.sort(key=lambda a: -a["logprob"])
        content.append({"token": tokens[2], "logprob": math.log(0.6), "bytes": None, "top_logprobs": alternatives})
        choice["logprobs"] = {"content": content, "refusal": None}
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": payload.get("model", "mock"),
        "choices": [choice],
        "usage": {"prompt_tokens": len(prompt.split()) + 5, "completion_tokens": 3,
                  "total_tokens": len(prompt.split()) + 8},
    }


def main() -> None:
    """Serve in the foreground (own process, so client and server do not share one interpreter lock).

    Prints the base URL on the first line of stdout, then serves until killed.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="loopback mock OpenAI-compatible server")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--rps", type=float, default=None, help="rate limit: requests per second (token bucket)")
    parser.add_argument("--burst", type=float, default=None, help="token bucket size (default rps / 10)")
    parser.add_argument("--arrivals", default=None, metavar="FILE",
                        help="append '<model> <time.monotonic()>' when a model's first completion request arrives")
    args = parser.parse_args()
    server = MockOpenAIServer(latency_s=args.latency, rate_limit_rps=args.rps, burst=args.burst)
    server.arrivals_file = args.arrivals
    server.start()
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
        sys.exit(0)


if __name__ == "__main__":
    main()
