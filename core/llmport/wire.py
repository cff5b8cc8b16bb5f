"""Kept import path: request bodies serialized once live in :mod:`llmport.provider.wire`."""

from .provider.wire import *  # noqa: F403
