"""OpenAI chat completions, and any OpenAI-compatible server (vLLM, Ollama, llama.cpp server) through base_url.

The API key is read from the environment: OPENAI_API_KEY, sent to OpenAI's own host only, and for any other
base_url RECJUDGE_SERVER_API_KEY (a server that needs none gets a placeholder; an exported OpenAI key never leaves
for another host); surrounding whitespace is stripped with a warning, other characters that cannot be sent are refused.
Requests go out through the ``openai`` SDK's client (``chat.completions``), built, and the SDK imported, on the
provider's first request: importing the engine, or a replay run, loads no SDK. The client's own retries are off: the
runner retries, with its own backoff and accounting.

Each request has an overall deadline (``timeout`` seconds, default env RECJUDGE_LLM_TIMEOUT, else 60): the body is
read as a stream and abandoned when the deadline passes, so a server trickling bytes cannot hold a worker for longer
than that (plus one read gap).  Bodies are parsed here, from the raw JSON, so an odd reply is seen as it is:

- not (complete) JSON: transient, retried within the retry policy (usually a connection cut mid-body);
- an HTML page: one attempt, then a failed judgment ("malformed"); before the job's first success it stops the job
  (a wrong base URL or a proxy page answers every prompt alike);
- JSON without a usable reply (``choices`` empty or missing, an ``error`` object, no ``message``): retried once,
  then a failed judgment ("malformed");
- a body above ``MAX_BODY_BYTES``: one attempt, failed ("malformed");
- ``content`` given as a list of parts or an object, usage numbers that are strings, NaN or absurd: kept, and
  normalised by the store (``recjudge.llm.store.sanitise_record``), which lists what it changed in ``repairs``.

Model identity.  The response-store key holds the provider name and the model name, not the endpoint (so the
committed store stays valid and a model served from another port is the same judge).  For an endpoint other than
OpenAI's own (``base_url`` set to another host), a collision between two servers that serve different weights under
one name is prevented by these rules, checked once before the first request (``prepare``):

1. A generic model name (``GENERIC_MODEL_NAMES``, e.g. "default", "model") or one of OpenAI's own model names
   (``gpt-…``, ``o1``…) served by another host is refused unless the judge configuration gives an explicit identity:
   ``JudgeConfig(model="<distinct identity, e.g. llama-3.1-8b-instruct-q4_k_m@vllm>", served_model="default")``;
   ``model`` is then what the store key records and ``served_model`` what is sent to the server.
2. When the server lists its models (``GET /models``), the name sent must be among them.
3. Every reply records the model id the server reported (``provenance.reported_model``, with
   ``system_fingerprint`` and the endpoint); a reported id that does not match the name sent is counted in the run
   report with a note.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import threading
import time
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from ...settings import env_number
from .. import shapes
from ._common import (
    MAX_BODY_BYTES,
    SERVER_KEY_ENV,
    api_key_from_env,
    endpoint_label,
    malformed,
    open_within,
    parse_json_body,
    read_body,
    redact,
    sdk_errors,
    short_error,
    url_credentials,
)
from .base import ChatProvider, Completion, ProviderError, ProviderRequest, TransientProviderError
from .batches import BatchBackend, BatchItem, BatchResult, BatchStatus, UnreadableLine, sdk_calls

DEFAULT_TIMEOUT_S = 60.0
TIMEOUT_ENV = "RECJUDGE_LLM_TIMEOUT"
#: Used only when a base_url is configured and no key is set: most local servers accept any key.
_NO_KEY_PLACEHOLDER = "not-needed"
#: Hosts that serve OpenAI's own models under OpenAI's names.
OPENAI_HOSTS = ("api.openai.com",)
#: Model names that say nothing about the weights behind them (see the module docstring, rule 1).
GENERIC_MODEL_NAMES = frozenset({"default", "model", "models", "local", "local-model", "llm", "test", "chat",
                                 "assistant", "server", "main", "base", "instruct", "gguf", "my-model", "custom"})
#: OpenAI's own model names: served by another host they identify nothing (rule 1).
_OPENAI_MODEL_NAME = re.compile(r"^(gpt-|chatgpt|o\d|text-davinci|davinci|babbage)", re.IGNORECASE)


def timeout_from_env(default: float = DEFAULT_TIMEOUT_S) -> float:
    """Seconds from RECJUDGE_LLM_TIMEOUT (default ``default``); a value that is not a positive number is an error
    naming the variable."""
    try:
        seconds = env_number(TIMEOUT_ENV, unit="seconds")
    except ValueError as exc:
        raise ProviderError(str(exc), kind="configuration", configuration=True) from None
    return default if seconds is None else seconds


def check_base_url(base_url: str) -> None:
    """ProviderError (configuration) for a base URL no request can use (a scheme other than http(s), no host, an
    invalid port) or one holding a credential (``url_credentials``): the one check of every base URL that enters,
    from a judge file, ``--base-url``, a JudgeConfig or OPENAI_BASE_URL."""
    parts = urlsplit(base_url)
    problem = credential_problem(base_url)
    if problem is not None:
        raise ProviderError(problem, kind="configuration", configuration=True)
    if parts.scheme not in ("http", "https"):
        raise ProviderError(f"base_url {endpoint_label(base_url) or base_url!r}: scheme {parts.scheme!r} is not "
                            "http or https", kind="configuration", configuration=True)
    try:
        port = parts.port
    except ValueError as exc:
        raise ProviderError(f"base_url: invalid port ({exc})", kind="configuration", configuration=True) from None
    if not parts.hostname:
        raise ProviderError("base_url has no host", kind="configuration", configuration=True)
    if port == 0:
        raise ProviderError("base_url: port 0 is not a port a server listens on", kind="configuration",
                            configuration=True)


def credential_problem(base_url: str) -> str | None:
    """Why ``base_url`` may not be used or recorded because it holds a credential (``url_credentials``), with where
    the key goes instead; None when it holds none."""
    held = url_credentials(base_url)
    if held is None:
        return None
    return (f"base_url {endpoint_label(base_url)!r} (shown without it) holds {held}; a base URL is written to "
            "variant.json, the executed notebooks and the run records, so it must carry no credential. Give the URL "
            f"without it and {key_advice(base_url)}")


def key_advice(base_url: str | None) -> str:
    """Where the key for ``base_url`` goes: the environment variable this provider sends to that host."""
    if is_openai_host(base_url):
        return "put the key in the environment variable OPENAI_API_KEY"
    return (f"put the server's key in the environment variable {SERVER_KEY_ENV}, which is sent to it as the "
            "Authorization header (OPENAI_API_KEY is sent to OpenAI's own host only)")


def is_openai_host(base_url: str | None) -> bool:
    return base_url is None or (urlsplit(base_url).hostname or "").lower() in OPENAI_HOSTS


def identity_problem(base_url: str | None, served_model: str, explicit_identity: bool) -> str | None:
    """Why a model name cannot identify a judge at this endpoint (module docstring, rule 1), or None."""
    if is_openai_host(base_url) or explicit_identity:
        return None
    name = served_model.strip().lower()
    if name in GENERIC_MODEL_NAMES or _OPENAI_MODEL_NAME.match(name):
        return (f"model name {served_model!r} at {endpoint_label(base_url)} does not identify the weights served "
                "there (a generic name, or an OpenAI model name on another host), so replies of different models "
                "would share store entries. Give the judge an explicit identity: JudgeConfig(model='<distinct name, "
                f"e.g. the weights file and server>', served_model={served_model!r})")
    return None


class OpenAICompatProvider(ChatProvider):
    """Provider for the OpenAI chat-completions API (``provider="openai"``)."""

    name = "openai"

    def __init__(self, base_url: str | None = None, timeout: float | None = None):
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        if self.base_url is not None:
            check_base_url(self.base_url)
        self.timeout = float(timeout) if timeout is not None else timeout_from_env()
        # OPENAI_API_KEY goes to OpenAI's own host only: a reader with a real key exported must not send it to a
        # local server or a proxy. Another server gets the key named for it, or a placeholder.
        to_openai = is_openai_host(self.base_url) and (self.base_url is None
                                                       or urlsplit(self.base_url).scheme == "https")
        key_env = "OPENAI_API_KEY" if to_openai else SERVER_KEY_ENV
        api_key = api_key_from_env(key_env)
        if not api_key:
            if self.base_url is None:
                raise ProviderError(
                    "provider 'openai' needs the environment variable OPENAI_API_KEY (or a base_url of an "
                    "OpenAI-compatible server); replay mode needs neither"
                )
            api_key = _NO_KEY_PLACEHOLDER
        self._api_key = api_key
        self._sdk_client: Any = None
        self._sdk_lock = threading.Lock()
        self._listed: dict[str, tuple[str, ...] | None] = {}
        self._listed_lock = threading.Lock()
        # Set once this server has refused a strict JSON schema and taken it as json_object + schema instead.
        self._schema_as_json_object = False

    def __repr__(self) -> str:  # never show the client (it holds the key)
        return f"OpenAICompatProvider(base_url={self.base_url!r}, timeout={self.timeout})"

    def _sdk(self) -> tuple[ModuleType, Any]:
        """The ``openai`` module and this provider's ``openai.OpenAI`` client, both loaded on first use: importing
        the SDK costs more CPU than the rest of a judge's start, and a run answered from the store never needs it."""
        import openai

        with self._sdk_lock:
            if self._sdk_client is None:
                self._sdk_client = openai.OpenAI(
                    api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0,
                    http_client=openai.DefaultHttpxClient(follow_redirects=False))
            return openai, self._sdk_client

    # ------------------------------------------------------------------------------------------ identity
    def prepare(self, served_model: str, *, explicit_identity: bool = False) -> None:
        """Check, before the first request, that ``served_model`` can identify a judge at this endpoint (module
        docstring, rules 1 and 2).  Raises ProviderError (configuration) otherwise; a server that cannot be
        reached at all is reported here too, before any prompt is sent."""
        problem = identity_problem(self.base_url, served_model, explicit_identity)
        if problem:
            raise ProviderError(problem, kind="configuration", configuration=True)
        if is_openai_host(self.base_url):
            return
        listed = self.listed_models()
        if listed is not None and served_model not in listed:
            raise ProviderError(
                f"model {served_model!r} is not among the models {endpoint_label(self.base_url)} serves "
                f"({', '.join(listed[:10]) or 'none'}{'...' if len(listed) > 10 else ''})",
                kind="configuration", configuration=True)

    def listed_models(self) -> tuple[str, ...] | None:
        """The model ids the server lists at ``GET /models``, or None when it offers no usable list."""
        with self._listed_lock:
            if "ids" not in self._listed:
                self._listed["ids"] = self._fetch_listed_models()
            return self._listed["ids"]

    def _fetch_listed_models(self) -> tuple[str, ...] | None:
        openai, client = self._sdk()
        try:
            with sdk_errors(openai, "openai", endpoint_label(self.base_url)):
                with client.models.with_streaming_response.list(timeout=min(self.timeout, 10.0)) as response:
                    body = read_body(response.iter_bytes(), time.monotonic() + self.timeout, "openai /models",
                                     max_bytes=8 * 1024 * 1024)
        except TransientProviderError as exc:
            if exc.configuration:  # nothing listens there: say so now rather than once per prompt
                raise ProviderError(str(exc), kind="configuration", configuration=True) from None
            return None
        except ProviderError as exc:
            if exc.configuration:
                raise
            return None  # e.g. 404: not every compatible server lists its models
        try:
            data = parse_json_body(body, response.headers.get("content-type"), "openai /models")
        except ProviderError:
            return None
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list):
            return None
        return tuple(str(item["id"]) for item in items if isinstance(item, dict) and "id" in item)

    # ------------------------------------------------------------------------------------------ asking
    @staticmethod
    def body(request: ProviderRequest) -> dict[str, Any]:
        """The chat-completions request body (sent directly, or as one line of a batch).  An ``output_schema``
        option becomes ``response_format`` (structured outputs, strict JSON schema): a server without structured
        outputs refuses the request, and the judgment fails with its error rather than being asked unconstrained
        under the constrained key (judge it with a configuration without ``output_shape`` instead)."""
        params: dict[str, Any] = dict(request.options or {})
        schema = params.pop(shapes.OPTION, None)
        if schema is not None:
            params["response_format"] = shapes.openai_response_format(schema)
        params.update(model=request.model, messages=request.messages, temperature=request.temperature,
                      max_tokens=request.max_tokens)
        if request.seed is not None:
            params["seed"] = request.seed
        if request.logprobs:
            params.update(logprobs=True, top_logprobs=20)
        return params

    def batches(self):
        """This endpoint's Batch API (run by ``recjudge.llm.batch``)."""
        return OpenAIBatches(self._sdk()[1], self.base_url)

    def ask(self, request: ProviderRequest) -> Completion:
        """One chat completion.  A compatible server that refuses ``response_format`` of type ``json_schema``
        (llama-cpp-python's answers HTTP 500 with a validation error naming the field) is asked again at once with
        the same schema as ``json_object`` + ``schema``, and so from then on: the reply is held to the same schema,
        its key is unchanged, and its provenance records the form."""
        params = self.body(request)
        schema = request.options.get(shapes.OPTION) if request.options else None
        if schema is None or is_openai_host(self.base_url):
            return self._create(params)
        if not self._schema_as_json_object:
            try:
                return self._create(params)
            except ProviderError as error:
                if "response_format" not in str(error):
                    raise
                self._schema_as_json_object = True
        params["response_format"] = shapes.json_object_response_format(schema)
        completion = self._create(params)
        completion.provenance["response_format"] = "json_object with schema"
        return completion

    def _create(self, params: dict[str, Any]) -> Completion:
        openai, client = self._sdk()
        started = time.perf_counter()
        deadline = time.monotonic() + self.timeout
        with sdk_errors(openai, "openai", endpoint_label(self.base_url)):
            manager, response = open_within(
                lambda: client.chat.completions.with_streaming_response.create(**params), deadline, "openai")
            try:
                content_type = response.headers.get("content-type")
                body = read_body(response.iter_bytes(), deadline, "openai",
                                 expected=_content_length(response.headers))
            finally:
                manager.__exit__(None, None, None)
        latency = time.perf_counter() - started
        data = parse_json_body(body, content_type, "openai")
        return _completion_from_json(data, latency, self.base_url)


def _content_length(headers: Any) -> int | None:
    value = (headers.get("content-length") or "").strip()
    return int(value) if value.isdigit() and not headers.get("content-encoding") else None


def _completion_from_json(data: Any, latency: float, base_url: str | None) -> Completion:
    if not isinstance(data, dict):
        raise malformed("openai", f"the body is a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        error = data.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else error
            raise malformed("openai", f"error object in a 200 reply: {redact(str(message))[:200]}")
        raise malformed("openai", "no choices" if choices is not None else "no 'choices' field")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise malformed("openai", "the first choice has no message")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    try:
        token_logprobs = _logprobs(choice.get("logprobs"))
    except (AttributeError, TypeError, ValueError, KeyError):
        token_logprobs = None  # unreadable alternatives: the reply is kept, its expected score will be NaN
    provenance = {"reported_model": data.get("model"), "system_fingerprint": data.get("system_fingerprint")}
    if not is_openai_host(base_url):
        provenance["endpoint"] = endpoint_label(base_url)
    return Completion(
        text=message.get("content"),  # a string as a rule; the store normalises lists of parts and objects
        input_tokens=usage.get("prompt_tokens"),
        output_tokens=usage.get("completion_tokens"),
        logprobs=token_logprobs,
        latency_s=latency,
        finish_reason=choice.get("finish_reason"),
        provenance={k: v for k, v in provenance.items() if v is not None},
    )


def _logprobs(logprobs: Any) -> list[dict[str, float]] | None:
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content:
        return None
    positions = []
    for position in content:
        alternatives = {alt["token"]: float(alt["logprob"]) for alt in (position.get("top_logprobs") or [])}
        positions.append(alternatives or {position["token"]: float(position["logprob"])})
    return positions


# ---------------------------------------------------------------------------------------------------- batches
#: States after which a batch changes no more.
_OPENAI_FINAL = {"completed", "failed", "expired", "cancelled"}


class OpenAIBatches(BatchBackend):
    """OpenAI's Batch API through the ``openai`` SDK client of an ``OpenAICompatProvider``."""

    provider = "openai"

    def __init__(self, client: Any, base_url: str | None):
        import openai

        self.client = client
        self.base_url = base_url
        self._calls = functools.partial(sdk_calls, openai, openai.OpenAIError, "openai batch")

    def submit(self, items: list[BatchItem]) -> str:
        lines = "".join(json.dumps({"custom_id": item.key, "method": "POST", "url": "/v1/chat/completions",
                                    "body": item.body}, ensure_ascii=False) + "\n" for item in items)
        with self._calls():
            uploaded = self.client.files.create(file=("batch.jsonl", lines.encode("utf-8")), purpose="batch")
            batch = self.client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                               completion_window="24h")
        return str(batch.id)

    def status(self, batch_id: str) -> BatchStatus:
        with self._calls():
            batch = self.client.batches.retrieve(batch_id)
        counts = getattr(batch, "request_counts", None)
        counted = {name: int(getattr(counts, name, 0) or 0) for name in ("total", "completed", "failed")}
        return BatchStatus(done=batch.status in _OPENAI_FINAL, state=str(batch.status), counts=counted)

    def result_files(self, batch_id: str) -> list[tuple[str, bytes]]:
        files = []
        with self._calls():
            batch = self.client.batches.retrieve(batch_id)
            for name, file_id in (("output file", batch.output_file_id), ("error file", batch.error_file_id)):
                if file_id:
                    files.append((f"{name} {file_id}", self.client.files.content(file_id).content))
        return files

    def read_line(self, entry: dict[str, Any]) -> BatchResult:
        key = entry["custom_id"]
        response, error = entry.get("response"), entry.get("error")
        if response is not None and not isinstance(response, dict):
            raise UnreadableLine(f"its 'response' is a JSON {type(response).__name__}, not an object")
        if not response and not error:
            raise UnreadableLine("neither a response nor an error")
        response = response or {}
        status = response.get("status_code")
        if error or status != 200:
            code = error.get("code") if isinstance(error, dict) else None
            kind = code if code in ("batch_expired", "batch_cancelled") else "batch_error"
            return BatchResult(key, error=_error_message(error, response.get("body"), status), kind=kind)
        try:
            completion = _completion_from_json(response.get("body"), math.nan, self.base_url)
        except ProviderError as exc:
            return BatchResult(key, error=str(exc), kind=exc.kind)
        completion.latency_s = None
        return BatchResult(key, completion=completion)


def _error_message(error: Any, body: Any, status: Any) -> str:
    """What an OpenAI error line says: the error object's message, else the response body's, else its status."""
    for source in (error, body.get("error") if isinstance(body, dict) else body):
        message = source.get("message") if isinstance(source, dict) else source
        if message:
            text = redact(str(message))[:200]
            return f"HTTP {status}: {text}" if isinstance(status, int) and status != 200 else text
    return f"HTTP {status}"


__all__ = ["GENERIC_MODEL_NAMES", "MAX_BODY_BYTES", "OpenAICompatProvider", "check_base_url", "identity_problem",
           "short_error"]
