"""Settings read from environment variables and command-line options, with errors that name the setting and the
value found.

Every knob of the engine that a user sets in the environment (mode, concurrency, rate limit, cost limit, timeouts,
batch polling, local threads) is read through ``env_number`` or ``env_flag``, so a typo is reported the same way
everywhere instead of surfacing as a bare ``ValueError`` deep in a run.  A command-line count (``--jobs``,
``--trials``, ``--workers``) is read with ``whole_number``, which refuses one below its least value as argparse
refuses an unknown option.
"""

from __future__ import annotations

import argparse
import math
import os
from typing import Callable

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def env_number(name: str, kind: type = float, *, allow_zero: bool = False, unit: str = "") -> float | int | None:
    """The number in environment variable ``name``, or None when it is unset or empty.

    ``kind`` is float or int; the number must be positive (zero too with ``allow_zero``).  ``unit`` ("seconds")
    only words the error.  ValueError naming the variable and its value otherwise."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    what = ("a whole number" if kind is int else "a number") + (f" of {unit}" if unit else "")
    try:
        number = kind(value)
    except ValueError:
        raise ValueError(f"environment variable {name}={value!r} is not {what}") from None
    if not math.isfinite(number):  # "inf" parses, and would wait, spend or ask without any limit
        raise ValueError(f"environment variable {name}={value!r} is not a finite number")
    if not (number >= 0 if allow_zero else number > 0):
        raise ValueError(f"environment variable {name}={value!r} must be {'zero or more' if allow_zero else 'positive'}"
                         + (f" {unit}" if unit else ""))
    return number


def env_flag(name: str, default: bool) -> bool:
    """The switch in environment variable ``name`` (1/0, true/false, yes/no, on/off; ``default`` when unset or
    empty); ValueError naming the variable otherwise."""
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"environment variable {name}={value!r} is not a switch: use 1 or 0")


def whole_number(at_least: int) -> Callable[[str], int]:
    """An argparse ``type`` for a count given on the command line: a whole number of at least ``at_least``;
    anything else is refused at parsing, naming the option (``argument --trials: must be a whole number of at least
    1, got '-3'``), before the command does anything."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < at_least:
            raise argparse.ArgumentTypeError(f"must be a whole number of at least {at_least}, got {text!r}")
        return value

    parse.__name__ = f"whole number of at least {at_least}"  # what argparse names in its own messages
    return parse
