"""OpenAI chat completions, and any OpenAI-compatible server (vLLM, Ollama, llama.cpp server) through base_url.

The API key is read from the environment variable OPENAI_API_KEY only (a local server that needs none gets a
placeholder).  The client's own retries are off: the runner retries, with its own backoff and accounting.
"""

from __future__ import annotations

import os
import time
from typing import Any

from .base import Completion, Message, ProviderError, TransientProviderError
from ._common import sdk_errors

DEFAULT_TIMEOUT_S = 60.0
#: Used only when a base_url is configured and no key is set: most local servers accept any key.
_NO_KEY_PLACEHOLDER = "not-needed"


class OpenAICompatProvider:
    """Provider for the OpenAI chat-completions API (``provider="openai"``)."""

    name = "openai"

    def __init__(self, base_url: str | None = None, timeout: float | None = None):
        import openai

        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.timeout = float(timeout if timeout is not None else os.environ.get("RECJUDGE_LLM_TIMEOUT", DEFAULT_TIMEOUT_S))
        api_key = os.environ.get("OPENAI_API_KEY")
        if not api_key:
            if self.base_url is None:
                raise ProviderError(
                    "provider 'openai' needs the environment variable OPENAI_API_KEY (or a base_url of an "
                    "OpenAI-compatible server); replay mode needs neither"
                )
            api_key = _NO_KEY_PLACEHOLDER
        self._openai = openai
        self._client = openai.OpenAI(api_key=api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0)

    def __repr__(self) -> str:  # never show the client (it holds the key)
        return f"OpenAICompatProvider(base_url={self.base_url!r}, timeout={self.timeout})"

    def complete(
        self,
        messages: list[Message],
        *,
        model: str,
        temperature: float,
        max_tokens: int,
        seed: int | None = None,
        logprobs: bool = False,
        options: dict[str, Any] | None = None,
    ) -> Completion:
        openai = self._openai
        params: dict[str, Any] = dict(options or {})
        params.update(model=model, messages=messages, temperature=temperature, max_tokens=max_tokens)
        if seed is not None:
            params["seed"] = seed
        if logprobs:
            params.update(logprobs=True, top_logprobs=20)
        started = time.perf_counter()
        with sdk_errors(openai, "openai"):
            response = self._client.chat.completions.create(**params)
        latency = time.perf_counter() - started
        try:
            choice = response.choices[0]
            text = choice.message.content
            if text is None:
                text = ""
            usage = getattr(response, "usage", None)
            token_logprobs = None
            content = getattr(getattr(choice, "logprobs", None), "content", None)
            if content:
                token_logprobs = [
                    {alt.token: float(alt.logprob) for alt in (position.top_logprobs or [])}
                    or {position.token: float(position.logprob)}
                    for position in content
                ]
        except (AttributeError, IndexError, TypeError, ValueError) as exc:
            raise TransientProviderError(f"openai unreadable response body: {type(exc).__name__}") from None
        return Completion(
            text=text,
            input_tokens=getattr(usage, "prompt_tokens", None),
            output_tokens=getattr(usage, "completion_tokens", None),
            logprobs=token_logprobs,
            latency_s=latency,
            finish_reason=getattr(choice, "finish_reason", None),
        )

