"""Small helpers shared by the HTTP providers: Retry-After reading, secret redaction, SDK error translation."""

from __future__ import annotations

import email.utils
import json
import os
import re
import threading
import time
import warnings
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Callable, ContextManager, Iterable, Iterator, Mapping
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from .base import UNREACHABLE, ProviderError, TransientProviderError

#: Environment variables whose values must never leave the process (store, tables, logs, error texts).
#: The key sent to an OpenAI-compatible server other than OpenAI's own (OPENAI_API_KEY goes to OpenAI only).
SERVER_KEY_ENV = "RECJUDGE_SERVER_API_KEY"
SECRET_ENV_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", SERVER_KEY_ENV)


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date); None if absent/invalid."""
    if not headers:
        return None
    getter = headers.get
    value = getter("retry-after-ms")
    if value is not None:
        try:
            return max(float(value) / 1000.0, 0.0)
        except ValueError:
            pass
    value = getter("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(email.utils.mktime_tz(parsed) - time.time(), 0.0)


def redact(text: object) -> str:
    """``str(text)`` with the value of every secret environment variable replaced by ``***``."""
    result = str(text)
    for name in SECRET_ENV_VARS:
        raw = os.environ.get(name) or ""
        # The key is sent stripped: either form may appear in a message (the longer first, so it is matched whole).
        for secret in sorted({raw, raw.strip()}, key=len, reverse=True):
            if len(secret) >= 4:
                result = result.replace(secret, "***")
    return result


#: HTTP statuses worth retrying besides 5xx: request timeout, conflict, rate limit.
_RETRYABLE_STATUSES = (408, 409, 429)


def short_error(exc: BaseException, limit: int = 300) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[:limit] + "..."


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


_HTTP_ERRORS: tuple[tuple[type, ...], ...] | None = None


def _http_error_classes() -> tuple[tuple[type, ...], ...]:
    """(unusable request, refused connection, timeout, any transport error) exception classes of the HTTP
    libraries the SDKs are built on (``httpx``, and ``httpx2`` in recent openai releases)."""
    global _HTTP_ERRORS
    if _HTTP_ERRORS is None:
        import importlib

        modules = []
        for name in ("httpx", "httpx2"):
            try:
                modules.append(importlib.import_module(name))
            except ImportError:
                pass

        def classes(*names: str) -> tuple[type, ...]:
            return tuple(getattr(m, n) for m in modules for n in names if hasattr(m, n))

        _HTTP_ERRORS = (classes("UnsupportedProtocol", "InvalidURL", "LocalProtocolError"),
                        classes("ConnectError") + (ConnectionRefusedError,),
                        classes("TimeoutException"),
                        classes("TransportError"))
    return _HTTP_ERRORS


@contextmanager
def sdk_errors(sdk: ModuleType, label: str, endpoint: str | None = None) -> Iterator[None]:
    """Translate the exceptions of the ``openai`` or ``anthropic`` SDK (same class names in both) into
    TransientProviderError (retryable, with Retry-After) or ProviderError, with secrets redacted.

    Connection failures are told apart by their cause: a URL the client cannot use (unsupported scheme, invalid
    port, a header value such as the key that cannot be sent) is a configuration ProviderError, never retried; a
    refused connection is transient but marked ``configuration`` (the runner stops a job that has had no success
    yet: a wrong port or a server not started), and names ``endpoint`` (a base URL without credentials) when given;
    timeouts and dropped connections are plainly transient."""
    unusable, refused, timeouts, transport = _http_error_classes()
    try:
        yield
    except sdk.APIStatusError as exc:
        status = exc.status_code
        if 300 <= status < 400:  # never followed: a redirected POST becomes a GET and fails misleadingly later
            location = exc.response.headers.get("location") or "no Location given"
            raise ProviderError(f"{label} HTTP {status}: the server redirects to {redact(location)}; use that address "
                                "as the base URL", kind="configuration", configuration=True) from None
        message = f"{label} HTTP {status}: {redact(short_error(exc))}"
        if status == 429 and _out_of_quota(exc):  # asking again cannot help: the whole job stops at once
            raise ProviderError(f"{label} HTTP 429 insufficient_quota: the account has no credit left (see the plan "
                                f"and billing of the API key); no further prompt is sent. {message}", kind="quota",
                                configuration=True) from None
        if status in _RETRYABLE_STATUSES or status >= 500:
            raise TransientProviderError(message, retry_after_seconds(exc.response.headers),
                                         status=status) from None
        raise ProviderError(message) from None
    except sdk.APIConnectionError as exc:  # includes APITimeoutError
        causes = list(_causes(exc))
        if any(isinstance(c, unusable) for c in causes):
            cause = next(c for c in causes if isinstance(c, unusable))
            raise ProviderError(f"{label} request cannot be sent (check the base URL and the API key's "
                                f"value): {redact(short_error(cause))}", kind="configuration",
                                configuration=True) from None
        if any(isinstance(c, refused) for c in causes) and not any(isinstance(c, timeouts) for c in causes):
            cause = next(c for c in causes if isinstance(c, refused))
            where = f" to {endpoint} (is the server running there? check the base URL)" if endpoint else ""
            raise TransientProviderError(f"{label} cannot connect{where}: {redact(short_error(cause))}",
                                         kind=UNREACHABLE, configuration=True) from None
        raise TransientProviderError(f"{label} connection: {redact(short_error(exc))}") from None
    except transport as exc:  # while reading a streamed body: timeout, connection cut
        raise TransientProviderError(f"{label} connection while reading the reply: {redact(short_error(exc))}") \
            from None
    except (sdk.APIResponseValidationError, ValueError) as exc:
        raise TransientProviderError(f"{label} unreadable response body: {redact(short_error(exc))}") from None


#: Error codes with which a provider says the account is out of credit (OpenAI's 429 ``insufficient_quota``).
QUOTA_CODES = ("insufficient_quota",)


def _out_of_quota(exc: BaseException) -> bool:
    """True when an SDK's status error says the account is out of credit, not that it asks too fast."""
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    codes = {getattr(exc, "code", None), getattr(exc, "type", None)}
    if isinstance(error, dict):
        codes |= {error.get("code"), error.get("type")}
    return any(code in QUOTA_CODES for code in codes if isinstance(code, str))


def open_within(opener: Callable[[], ContextManager[Any]], deadline: float, label: str) -> tuple[Any, Any]:
    """Enter ``opener()`` (an SDK's streamed response: connect, send, read the status line and headers) and return
    (the context manager, the response), giving up at the monotonic ``deadline`` with a TransientProviderError.

    The SDK's timeout bounds each read, so a server trickling its status line and headers a byte at a time could
    hold a worker as long as it liked; the opening therefore runs in a helper thread that this one waits for no
    longer than the deadline. A response that arrives after the worker gave up is closed by the helper (no reply is
    lost that was ever received: a reply is only received with its body, which is read after this)."""
    state: dict[str, Any] = {"abandoned": False, "manager": None, "response": None, "error": None}
    lock = threading.Lock()
    done = threading.Event()

    def enter() -> None:
        manager = response = error = None
        try:
            manager = opener()
            response = manager.__enter__()
        except BaseException as exc:  # re-raised in the waiting thread, where the SDK's errors are translated
            error = exc
        with lock:
            state.update(manager=manager, response=response, error=error)
            close_now = state["abandoned"] and error is None
            done.set()
        if close_now:
            manager.__exit__(None, None, None)

    threading.Thread(target=enter, name=f"recjudge-{label}-open", daemon=True).start()
    done.wait(max(0.0, deadline - time.monotonic()))
    with lock:
        if not done.is_set():
            state["abandoned"] = True
            raise TransientProviderError(f"{label} connection: no response headers within the request's deadline "
                                         "(RECJUDGE_LLM_TIMEOUT)")
    if state["error"] is not None:
        raise state["error"]
    return state["manager"], state["response"]


#: A reply body larger than this is not read further (an honest chat completion is a few kB; see
#: ``recjudge.llm.store.max_stored_chars`` for how much reply text is kept).
MAX_BODY_BYTES = 64 * 1024 * 1024


def read_body(chunks: Iterable[bytes], deadline: float, label: str, max_bytes: int = MAX_BODY_BYTES,
              expected: int | None = None) -> bytes:
    """The body from ``chunks`` (an ``iter_bytes()``), stopping with TransientProviderError when the monotonic
    ``deadline`` passes (a server trickling bytes would otherwise outlive any per-read timeout) and with a
    malformed-reply error when it exceeds ``max_bytes``.  A body complete by its Content-Length (``expected``) is
    kept even when its last bytes arrived after the deadline: it has been paid for."""
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > max_bytes:
            raise TransientProviderError(f"{label} reply body larger than {max_bytes} bytes", kind="malformed",
                                         max_attempts=1)
        parts.append(chunk)
        # a body complete by its length is read to the stream's end (at once), so its connection is reused
        if expected is not None and size >= expected:
            continue
        if time.monotonic() > deadline:
            raise TransientProviderError(f"{label} reply not complete within the request deadline "
                                         f"({size} bytes received)", kind="deadline")
    return b"".join(parts)


def parse_json_body(body: bytes, content_type: str | None, label: str) -> Any:
    """The JSON value of a 200 reply body.  An HTML page is a configuration problem (wrong base URL, a proxy's
    login page): one attempt, and it stops a job that has had no success.  A body that is not (complete) JSON is
    transient (usually a connection cut mid-body) and retried like one."""
    head = body.lstrip()[:1]
    if "html" in (content_type or "").lower() or head == b"<":
        raise TransientProviderError(f"{label} sent an HTML page instead of JSON (content-type {content_type!r}); "
                                     "is the base URL right?", kind="malformed", max_attempts=1, configuration=True)
    try:
        return json.loads(body)
    except ValueError as exc:  # includes invalid UTF-8
        raise TransientProviderError(f"{label} unreadable response body: {short_error(exc, 160)}") from None


def malformed(label: str, what: str) -> TransientProviderError:
    """A well-formed JSON 200 reply that holds no usable reply (empty ``choices``, an error object): retried once,
    then a failed judgment of kind "malformed"."""
    return TransientProviderError(f"{label} malformed reply: {what}", kind="malformed", max_attempts=2)


#: Query parameter names that carry a credential (``?api_key=``, ``?access_token=``, ``?sig=``, ...).
_CREDENTIAL_PARAMETER = re.compile(r"key|token|secret|passw|pwd|auth|credential|signature|^sig$|bearer",
                                   re.IGNORECASE)


def url_credentials(url: str) -> str | None:
    """Which part of ``url`` holds a credential, or None: user information (``user:password@``), a query parameter
    named like a key, token, secret or password, a fragment (never sent to a server, so only a pasted secret) or a
    path parameter (``/v1;api_key=...``: no OpenAI-compatible API uses one, so only a secret, named or not).
    A URL is written wherever a judge is recorded (variant.json, executed notebooks, run records), so one that
    holds a credential is refused where it enters, never stored (``check_base_url``)."""
    parts = urlsplit(url)
    if "@" in parts.netloc:
        return "a user name or password (user:password@host)"
    named = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True) if _CREDENTIAL_PARAMETER.search(name)]
    if named:
        return f"the query parameter {named[0]!r}"
    if parts.fragment:
        return "a fragment (#...)"
    if ";" in parts.path:
        return "a path parameter (;...)"
    return None


def endpoint_label(base_url: str | None) -> str | None:
    """``base_url`` without credentials, path parameters, query or fragment (what provenance records), or None."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    try:
        netloc = host if parts.port is None else f"{host}:{parts.port}"
    except ValueError:  # an invalid port, shown as written (still without user information)
        netloc = parts.netloc.rpartition("@")[2]
    path = "/".join(segment.partition(";")[0] for segment in parts.path.split("/"))
    return urlunsplit((parts.scheme, netloc, path.rstrip("/"), "", ""))


def api_key_from_env(name: str) -> str | None:
    """The key in environment variable ``name``: surrounding whitespace (a pasted newline) is stripped with a
    warning; a key with other characters that cannot go in an HTTP header is refused with a ProviderError naming
    the variable (never the value) instead of surfacing later as a retried "connection error"."""
    raw = os.environ.get(name)
    if raw is None:
        return None
    key = raw.strip()
    if key != raw:
        warnings.warn(f"environment variable {name} has leading or trailing whitespace; it was stripped",
                      stacklevel=3)
    bad = [i for i, ch in enumerate(key) if not (" " < ch < "\x7f")]
    if bad:
        raise ProviderError(f"environment variable {name} contains {len(bad)} character(s) that cannot be sent in an "
                            f"HTTP header (first at position {bad[0]}); set it to the bare key",
                            kind="configuration", configuration=True)
    return key or None
