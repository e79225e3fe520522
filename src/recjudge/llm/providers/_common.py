"""Small helpers shared by the HTTP providers: Retry-After reading and secret redaction."""

from __future__ import annotations

import email.utils
import os
import time
from typing import Mapping

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
