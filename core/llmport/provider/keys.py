"""Where a provider's key may come from: the one rule every plugin follows.

A key reaches only the host its vendor documents.

A vendor's environment variable (``GROQ_API_KEY``, ``ANTHROPIC_API_KEY``,
``GEMINI_API_KEY``...) holds a key meant for the host that vendor documents.
A named instance with an endpoint of its own (``base_url``, or Bedrock's
``endpoint_url``) sends its requests somewhere else, so it never reads the
vendor's variables: it gets only the key its settings give (``api_key``, or
the variable its ``api_key_env`` names, resolved by
:func:`llmport.provider.instances.instance_settings`). The provider the
plugin registers itself (``groq:``, ``anthropic:``) and an instance without
an endpoint of its own read the environment as usual.

Plugins read their vendor's variables through
:meth:`llmport.provider.contract.Provider.environment_key`, never
``os.environ`` directly, and pass the result to their SDK explicitly (an SDK
given no key reads the same variables itself).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["ENDPOINT_SETTINGS", "environment_key", "reads_environment_keys"]

#: Settings that send a provider's requests to a host of the user's choosing.
ENDPOINT_SETTINGS = ("base_url", "endpoint_url")


def reads_environment_keys(instance_of: str, settings: Mapping[str, Any]) -> bool:
    """Whether a provider may take its key from its vendor's environment variables.

    ``instance_of`` is the provider a named instance was made from (``""``
    for a provider a plugin registered itself).
    """
    if not instance_of:
        return True
    return not any(settings.get(name) for name in ENDPOINT_SETTINGS)


def environment_key(
    instance_of: str,
    settings: Mapping[str, Any],
    *variables: str,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """The first of ``variables`` set in the environment, if this provider may read them."""
    if not reads_environment_keys(instance_of, settings):
        return None
    source = os.environ if env is None else env
    for name in variables:
        value = source.get(name)
        if value:
            return value
    return None
