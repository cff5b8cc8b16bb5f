"""Every private name of ``botocore`` this plugin uses, and only here.

The direct path (:mod:`.direct`) sends Converse requests with botocore's own
serializer, signer and parser, but on the client's urllib3 session directly
(and on aiohttp for async), skipping the client's per-call event hooks and
model lookups. To reuse the client's connection pool, proxies and CA bundle
it needs two attributes botocore keeps private. Each is wrapped below in one
function that says what it is, why the public API does not do the job at the
same speed, and since which botocore version it has this shape.

Each shape is pinned by ``tests/bedrock/test_bedrock_sdk_internals.py``: a
release that moves one fails one clearly named test. botocore is reached
only through the objects passed in, never imported at plugin import.
"""

from __future__ import annotations

from typing import Any

#: botocore's private names used below: none is on a module or class.
USED: tuple[tuple[str, str], ...] = ()

#: Private attributes set on instances (class, then attribute): not on the class.
ON_INSTANCES: tuple[tuple[str, str], ...] = (
    ("botocore.client.BaseClient", "_endpoint"),
    ("botocore.httpsession.URLLib3Session", "_verify"),
)


def http_session(client: Any) -> Any:
    """The client's own ``URLLib3Session``: its pool, timeouts, proxies and CA bundle.

    ``client._endpoint.http_session`` (the same in botocore 1.35
    and 1.44). The public ``client.converse`` sends through it too, but each call
    also runs the client's event hooks and validation again; a session of our
    own would duplicate the pool and botocore's config resolution.
    """
    return client._endpoint.http_session


def session_verify(session: Any) -> bool | str:
    """What ``session`` verifies TLS with: ``False``, ``True`` or a CA bundle path.

    ``URLLib3Session._verify`` (the same in botocore 1.35 and 1.44),
    the resolved ``verify=`` / ``ca_bundle`` / ``AWS_CA_BUNDLE``; ``True``
    when the session has none. The async path builds its ``ssl`` context
    from it so both paths trust the same certificates; botocore exposes the
    resolved value nowhere public.
    """
    verify: bool | str = getattr(session, "_verify", True)
    return verify
