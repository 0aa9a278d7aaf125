"""Helpers for tests that send Ctrl-C to a child process."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """Give the child Ctrl-C back: a test run started in the background (nohup, `&`) ignores SIGINT, and a Python
    started with SIGINT ignored never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
