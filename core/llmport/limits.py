"""Kept import path: client-side rate limits live in :mod:`llmport.controls.limits`."""

from .controls.limits import *  # noqa: F403
