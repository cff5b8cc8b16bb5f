"""Kept import path: the redactor and register_secret live in :mod:`llmport.observe.redaction`."""

from .observe.redaction import *  # noqa: F403
