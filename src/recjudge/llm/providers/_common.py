"""Small helpers shared by the HTTP providers: Retry-After reading, secret redaction, SDK error translation."""

from __future__ import annotations

import email.utils
import os
import time
from contextlib import contextmanager
from types import ModuleType
from typing import Iterator, Mapping

from .base import ProviderError, TransientProviderError

#: Environment variables whose values must never leave the process (store, tables, logs, error texts).
SECRET_ENV_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")


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
        secret = os.environ.get(name)
        if secret and len(secret) >= 4:
            result = result.replace(secret, "***")
    return result


#: HTTP statuses worth retrying besides 5xx: request timeout, conflict, rate limit.
_RETRYABLE_STATUSES = (408, 409, 429)


def short_error(exc: BaseException, limit: int = 300) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[:limit] + "..."


@contextmanager
def sdk_errors(sdk: ModuleType, label: str) -> Iterator[None]:
    """Translate the exceptions of the ``openai`` or ``anthropic`` SDK (same class names in both) into
    TransientProviderError (retryable, with Retry-After) or ProviderError, with secrets redacted."""
    try:
        yield
    except sdk.APIStatusError as exc:
        status = exc.status_code
        message = f"{label} HTTP {status}: {redact(short_error(exc))}"
        if status in _RETRYABLE_STATUSES or status >= 500:
            raise TransientProviderError(message, retry_after_seconds(exc.response.headers)) from None
        raise ProviderError(message) from None
    except sdk.APIConnectionError as exc:  # includes APITimeoutError
        raise TransientProviderError(f"{label} connection: {redact(short_error(exc))}") from None
    except (sdk.APIResponseValidationError, ValueError) as exc:
        raise TransientProviderError(f"{label} unreadable response body: {redact(short_error(exc))}") from None
