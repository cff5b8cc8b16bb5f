"""Kept import path: structured-output helpers live in :mod:`llmport.output.structured`."""

from .output.structured import *  # noqa: F403
