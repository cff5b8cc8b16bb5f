"""Every private name of the ``openai`` SDK this plugin uses, and only here.

The fast path posts a body serialized once through ``client.post`` instead
of calling ``create(**payload)`` (which rebuilds and re-serializes the body
on every send); to send exactly what ``create`` would, it needs two helpers
the SDK keeps in private modules. Each is wrapped below in one function that
says what it is, why the public API does not do the job at the same speed,
and since which SDK version it has this shape. Each shape is pinned by
``tests/openai/test_openai_sdk_internals.py``: a release that moves one
fails one clearly named test. The SDK is imported inside the functions,
never at plugin import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The SDK's private names used below (module, then attribute).
USED: tuple[tuple[str, str], ...] = (
    ("openai._base_client", "make_request_options"),
    ("openai._utils", "path_template"),
)


def request_options(call: Mapping[str, Any]) -> dict[str, Any]:
    """The ``options`` ``create`` passes to ``client.post`` for ``call``.

    ``call`` holds any of ``extra_headers``, ``extra_query`` and ``timeout``.
    ``openai._base_client.make_request_options`` with the bearer-auth
    security ``create`` gives; keyword-only, ``security`` included, since
    openai 3.0. Public ``create`` builds these but also re-serializes the body
    per send; there is no public builder.
    """
    from openai._base_client import make_request_options

    return dict(make_request_options(**call, security={"bearer_auth": True}))


def deployment_path(model: str) -> str:
    """``/deployments/{model}`` with ``model`` quoted as ``AzureOpenAI`` quotes it.

    ``openai._utils.path_template`` (a template and keyword values, since
    openai 3.0): percent-encodes the value as one path segment and refuses
    dot segments (``ValueError``). ``AzureOpenAI._build_request`` applies it
    only to a dict body; ours is bytes, serialized once.
    """
    from openai._utils import path_template

    return str(path_template("/deployments/{model}", model=model))
