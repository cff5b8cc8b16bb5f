"""Kept import path: handoff input filters live in :mod:`llmport.tools.filters`."""

from .tools.filters import *  # noqa: F403
