"""What llmport logs, on the ``llmport`` logger (records redacted: see redaction.py).

* WARNING: a model request failed and will be retried (model, attempt,
  delay, error class).
* INFO: a run falls back to the next model (:func:`log_fallback`).
* DEBUG: the usage of every model response.

Configure it like any logger: ``logging.getLogger("llmport").setLevel(...)``.
Each helper checks the level first, so a disabled level costs one call.

The logger is made by :func:`logger` on first use: ``logging`` (with
``traceback``, ``string`` and ``textwrap``) costs ~8 ms of a script's
start-up, and most scripts log nothing before their first call.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging

__all__ = ["log_fallback", "log_retry", "log_usage", "logger"]

# The standard levels' values, so that a disabled level is checked without ``logging``.
_DEBUG, _INFO, _WARNING = 10, 20, 30


@functools.cache
def logger() -> logging.Logger:
    """The ``llmport`` logger (``logging`` is imported on the first call)."""
    import logging

    made = logging.getLogger("llmport")
    # A library's logger prints nothing until the application configures logging
    # (without it, Python's last-resort handler would print WARNINGs to stderr).
    made.addHandler(logging.NullHandler())
    return made


def log_retry(
    model: str, attempt: int, max_attempts: int, delay: float, error: BaseException
) -> None:
    """WARNING: attempt ``attempt`` of ``max_attempts`` failed; retrying in ``delay`` s."""
    log = logger()
    if log.isEnabledFor(_WARNING):
        log.warning(
            "%s: attempt %d/%d failed with %s: %s; retrying in %.2fs",
            model,
            attempt,
            max_attempts,
            type(error).__name__,
            error,
            delay,
            extra={
                "llmport_event": "retry",
                "llmport_model": model,
                "llmport_attempt": attempt,
                "llmport_delay": delay,
                "llmport_error": type(error).__name__,
            },
        )


def log_fallback(failed: str, next_model: str, error: BaseException | None) -> None:
    """INFO: ``failed`` gave up (``error``); the run continues with ``next_model``."""
    log = logger()
    if log.isEnabledFor(_INFO):
        why = f"{type(error).__name__}: {error}" if error is not None else "cannot take the request"
        log.info(
            "%s failed (%s); falling back to %s",
            failed,
            why,
            next_model,
            extra={
                "llmport_event": "fallback",
                "llmport_model": failed,
                "llmport_next_model": next_model,
                "llmport_error": type(error).__name__ if error is not None else None,
            },
        )


def log_usage(model: str, usage: Any) -> None:
    """DEBUG: the tokens one model response used."""
    log = logger()
    if log.isEnabledFor(_DEBUG):
        log.debug(
            "%s: usage input=%d output=%d cache_read=%d cache_write=%d reasoning=%d",
            model,
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.reasoning_tokens,
            extra={
                "llmport_event": "usage",
                "llmport_model": model,
                "llmport_usage": usage.to_dict(),
            },
        )
