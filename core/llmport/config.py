"""Kept import path: configuration, aliases and provider settings.

They live in :mod:`llmport.provider.config`.
"""

from .provider.config import *  # noqa: F403
