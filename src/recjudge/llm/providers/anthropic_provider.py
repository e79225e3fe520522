"""Anthropic messages API.  The key is read from the environment variable ANTHROPIC_API_KEY only.

Anthropic returns no log-probabilities, so scoring mode "expected" yields NaN (counted) with this provider.  An output
shape (``recjudge.llm.shapes``) is asked as a forced call of one tool whose input schema is the shape. Requests go out
through the ``anthropic`` SDK's client (``messages``), built, and the SDK imported, on the provider's first request:
importing the engine, or a replay run, loads no SDK.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from types import ModuleType
from typing import Any

from .. import shapes
from ._common import (
    api_key_from_env,
    endpoint_label,
    malformed,
    open_within,
    parse_json_body,
    read_body,
    redact,
    sdk_errors,
    short_error,
)
from .base import ChatProvider, Completion, ProviderError, ProviderRequest, TransientProviderError
from .batches import BatchBackend, BatchItem, BatchResult, BatchStatus, UnreadableLine, sdk_calls
from .openai_compat import timeout_from_env


class AnthropicProvider(ChatProvider):
    """Provider for Anthropic models (``provider="anthropic"``)."""

    name = "anthropic"

    def __init__(self, base_url: str | None = None, timeout: float | None = None):
        api_key = api_key_from_env("ANTHROPIC_API_KEY")
        if not api_key:
            raise ProviderError("provider 'anthropic' needs the environment variable ANTHROPIC_API_KEY; replay mode "
                                "does not")
        self.base_url = base_url
        self.timeout = float(timeout) if timeout is not None else timeout_from_env()
        self._api_key = api_key
        self._sdk_client: Any = None
        self._sdk_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"AnthropicProvider(base_url={self.base_url!r}, timeout={self.timeout})"

    def _sdk(self) -> tuple[ModuleType, Any]:
        """The ``anthropic`` module and this provider's ``anthropic.Anthropic`` client, both loaded on first use (as
        for OpenAI: a run answered from the store never needs them)."""
        import anthropic

        with self._sdk_lock:
            if self._sdk_client is None:
                options: dict[str, Any] = {"api_key": self._api_key, "timeout": self.timeout, "max_retries": 0}
                if self.base_url:
                    options["base_url"] = self.base_url
                self._sdk_client = anthropic.Anthropic(**options)
            return anthropic, self._sdk_client

    def ask(self, request: ProviderRequest) -> Completion:
        anthropic, client = self._sdk()
        body = self.body(request)
        # Sampling parameters go in the request body directly: recent SDK versions no longer list them as
        # arguments, but the API still reads temperature (and options such as top_k) from the body.
        params = {name: body.pop(name) for name in ("model", "messages", "max_tokens", "system") if name in body}
        params["extra_body"] = body
        started = time.perf_counter()
        deadline = time.monotonic() + self.timeout
        # The body is read as a stream and abandoned at the request's deadline, as for OpenAI: the SDK's timeout
        # bounds each read, so a server trickling bytes would otherwise hold the worker for as long as it likes.
        with sdk_errors(anthropic, "anthropic"):
            manager, streamed = open_within(
                lambda: client.messages.with_streaming_response.create(**params), deadline, "anthropic")
            try:
                content_type = streamed.headers.get("content-type")
                body = read_body(streamed.iter_bytes(), deadline, "anthropic")
            finally:
                manager.__exit__(None, None, None)
            data = parse_json_body(body, content_type, "anthropic")
            try:
                response = anthropic.types.Message.model_validate(data)
            except ValueError as exc:
                raise malformed("anthropic", f"not a message ({short_error(exc)})") from None
        return completion_from_message(response, time.perf_counter() - started, self.base_url)

    @staticmethod
    def body(request: ProviderRequest) -> dict[str, Any]:
        """The Messages API request body (sent directly, or as the params of a batch request).  Anthropic takes
        the system prompt as a separate field (several system messages are joined) and has no seed or
        log-probabilities."""
        messages = request.messages
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        turns = [{"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "system"]
        options = dict(request.options or {})
        schema = options.pop(shapes.OPTION, None)
        body: dict[str, Any] = {"model": request.model, "messages": turns, "max_tokens": request.max_tokens,
                                "temperature": request.temperature, **options}
        if schema is not None:  # a forced call of one tool whose input schema is the shape; its input is the reply
            body.update(shapes.anthropic_tool(schema))
        if system:
            body["system"] = system
        return body

    def batches(self):
        """Message Batches (run by ``recjudge.llm.batch``)."""
        return AnthropicBatches(self._sdk()[1], self.base_url)


def completion_from_message(response: Any, latency: float | None, base_url: str | None) -> Completion:
    """A ``Completion`` from an Anthropic Message (a direct reply, or a succeeded batch result)."""
    try:
        text = "".join(block.text for block in response.content if getattr(block, "type", None) == "text")
        answers = [block.input for block in response.content if getattr(block, "type", None) == "tool_use"
                   and getattr(block, "name", None) == shapes.ANTHROPIC_TOOL]
        if answers:  # a constrained reply: the forced tool call's input, as JSON text
            text = json.dumps(answers[0], ensure_ascii=False)
        usage = response.usage
    except (AttributeError, TypeError) as exc:
        raise TransientProviderError(f"anthropic unreadable response body: {type(exc).__name__}") from None
    return Completion(
        text=text,
        input_tokens=getattr(usage, "input_tokens", None),
        output_tokens=getattr(usage, "output_tokens", None),
        logprobs=None,
        latency_s=latency,
        finish_reason=getattr(response, "stop_reason", None),
        provenance={k: v for k, v in (("reported_model", getattr(response, "model", None)),
                                      ("endpoint", endpoint_label(base_url))) if isinstance(v, str)},
    )


class AnthropicBatches(BatchBackend):
    """Anthropic's Message Batches through the ``anthropic`` SDK client of an ``AnthropicProvider``."""

    provider = "anthropic"

    def __init__(self, client: Any, base_url: str | None):
        import anthropic

        self.client = client
        self.base_url = base_url
        self._calls = functools.partial(sdk_calls, anthropic, anthropic.AnthropicError, "anthropic batch")

    def submit(self, items: list[BatchItem]) -> str:
        with self._calls():
            batch = self.client.messages.batches.create(
                requests=[{"custom_id": item.key, "params": item.body} for item in items])
        return str(batch.id)

    def status(self, batch_id: str) -> BatchStatus:
        with self._calls():
            batch = self.client.messages.batches.retrieve(batch_id)
        counts = batch.request_counts
        counted = {name: int(getattr(counts, name, 0) or 0)
                   for name in ("processing", "succeeded", "errored", "canceled", "expired")}
        return BatchStatus(done=batch.processing_status == "ended", state=str(batch.processing_status),
                           counts=counted)

    def result_files(self, batch_id: str) -> list[tuple[str, bytes]]:
        # The raw stream, read whole: the SDK's decoder stops at the first line that is not JSON.
        with self._calls():
            stream = self.client.messages.batches.results(batch_id)
            try:
                content = stream.http_response.read()
            finally:
                stream.close()
        return [("results", content)]

    def read_line(self, entry: dict[str, Any]) -> BatchResult:
        from anthropic.types.messages import MessageBatchIndividualResponse

        key = entry["custom_id"]
        result = MessageBatchIndividualResponse.construct(**entry).result  # built without validation, like the SDK
        kind = getattr(result, "type", None)
        if kind == "succeeded":
            try:
                return BatchResult(key, completion=completion_from_message(result.message, None, self.base_url))
            except (TransientProviderError, AttributeError) as exc:
                return BatchResult(key, error=str(exc), kind="malformed")
        if kind == "errored":
            error = getattr(getattr(result, "error", None), "error", None)
            message = getattr(error, "message", None) or "errored"
            return BatchResult(key, error=redact(str(message))[:200], kind="batch_error")
        if kind in ("expired", "canceled"):  # the batch did not reach this request
            return BatchResult(key, error=f"request {kind}",
                               kind="batch_expired" if kind == "expired" else "batch_cancelled")
        raise UnreadableLine(f"its result type {kind!r} is none of succeeded, errored, canceled, expired"
                             if kind is not None else "no result object")
