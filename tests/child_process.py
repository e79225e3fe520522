"""Helpers for tests that start a child Python process and signal it."""

import signal


def default_sigint() -> None:
    """``preexec_fn`` for a child that must react to Ctrl-C. A job started in the background (``cmd &`` in a
    non-interactive shell, as a CI script may run the tests) inherits SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler, so the child would never see the signal the test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
