"""Kept import path: the neutral types live in :mod:`llmport.messages.types`."""

from .messages.types import *  # noqa: F403
