"""structlog set-up: readable key=value events on a terminal, JSON lines for machines."""

from __future__ import annotations

import logging
import sys

import structlog

LEVELS = ("debug", "info", "warning", "error")


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is at the time of writing.

    Binding the stream at configuration time breaks when a caller (a test
    runner, a notebook) swaps ``sys.stderr`` and later closes its replacement.
    """

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(*, json: bool = False, level: str = "info") -> None:
    """Route structlog events to stderr, as JSON lines (``json=True``) or coloured text.

    Args:
        json: one JSON object per event, for log shippers and tests.
        level: the least severe level shown: debug, info, warning or error.
    """
    renderer = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=_CurrentStderr()),
        cache_logger_on_first_use=False,
    )


def default_to_stderr() -> None:
    """Unless the application configured structlog itself: warnings and errors only, on stderr.

    structlog's own default prints every event, debug included, to stdout, which
    would mix Golem's log lines into a library user's output.
    """
    if not structlog.is_configured():
        configure_logging(level="warning")
