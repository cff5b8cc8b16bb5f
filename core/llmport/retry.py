"""Kept import path: retries and backoff live in :mod:`llmport.controls.retry`."""

from .controls.retry import *  # noqa: F403
