"""Kept import path: the data handed to policy hooks live in :mod:`llmport.tools.policy`."""

from .tools.policy import *  # noqa: F403
