"""Kept import path: the run context's key-value store live in :mod:`llmport.sessions.kv`."""

from .sessions.kv import *  # noqa: F403
