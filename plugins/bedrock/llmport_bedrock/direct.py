"""Non-streamed Converse without botocore's per-call machinery.

``client.converse`` spends most of its Python time on work llmport does not
need per attempt: the event hooks, the user-agent string rebuilt per call,
the endpoint ruleset, validating and serializing the same parameters again
on every retry, and walking the answer's shape model. This module does a
Converse call with only what the wire needs:

* the body is serialized **once per prepared request** with botocore's own
  rest-json serializer and parameter validator (so the bytes, the URL and
  the ``ParamValidationError`` report are exactly ``client.converse``'s),
  and reused by every attempt;
* each attempt is signed with botocore's :class:`~botocore.auth.SigV4Auth`
  (fresh timestamp, the credentials as the session resolves and refreshes
  them) and sent on the client's own HTTP session (its pool, timeouts,
  proxies and TLS settings, and its exceptions, translated as before), or
  on an aiohttp session for the async API;
* a 2xx JSON answer is read with ``json.loads``; the blob members a Converse
  answer can hold are base64-decoded as botocore would; an error status is
  parsed by botocore's own rest-json parser into the ``ClientError`` that
  ``client.converse`` raises, so every error is classified as before.

Used only when the client signs with SigV4 (no ``AWS_BEARER_TOKEN_BEDROCK``
API key, no ``auth_scheme_preference`` or ``signature_version``
configured); otherwise the provider calls ``client.converse``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping
from typing import Any, NoReturn

from llmport.errors import MalformedResponseError

from .convert_in import VENDOR, ConversePrepared
from .errors import call, input_error

#: Members of a Converse content block whose ``source.bytes`` is a blob.
_MEDIA = ("image", "document", "video", "audio")


def usable(client: Any) -> bool:
    """Whether ``client`` signs Converse with plain SigV4 (the only scheme done here)."""
    config = client.meta.config
    if getattr(config, "signature_version", None) not in (None, "v4"):
        return False
    if getattr(config, "auth_scheme_preference", None):
        return False
    # botocore prefers a Bedrock API key (bearer token) from the environment when set.
    return not os.environ.get("AWS_BEARER_TOKEN_BEDROCK")


class Wire:
    """What a direct Converse call needs from one boto3 client, looked up once."""

    __slots__ = (
        "endpoint_url",
        "http",
        "operation",
        "parser",
        "proxy",
        "region",
        "serializer",
        "signing_name",
        "user_agent",
    )

    def __init__(self, client: Any) -> None:
        from botocore.parsers import create_parser  # type: ignore[import-untyped]
        from botocore.serialize import create_serializer  # type: ignore[import-untyped]

        meta = client.meta
        model = meta.service_model
        self.operation = model.operation_model("Converse")
        self.serializer = create_serializer(model.protocol, include_validation=True)
        self.parser = create_parser(model.protocol)
        self.endpoint_url: str = meta.endpoint_url.rstrip("/")
        self.region: str = meta.region_name
        self.signing_name: str = model.signing_name or model.endpoint_prefix
        # The client's own urllib3 session: its pool, timeouts, proxies and CA bundle.
        self.http: Any = client._endpoint.http_session
        self.user_agent = _botocore_agent()
        self.proxy: tuple[Any, Any] | None = None  # see env_proxy

    def env_proxy(self) -> tuple[Any, Any]:
        """``(proxy URL, proxy auth)`` for the async path from ``HTTP(S)_PROXY`` / ``NO_PROXY``.

        Looked up once (botocore honours the same variables); aiohttp's own
        ``trust_env`` would look them, and ``.netrc``, up on a thread every request.
        """
        if self.proxy is None:
            from aiohttp.helpers import get_env_proxy_for_url
            from yarl import URL

            try:
                self.proxy = get_env_proxy_for_url(URL(self.endpoint_url))
            except LookupError:
                self.proxy = (None, None)
        return self.proxy

    def body(self, prepared: ConversePrepared) -> tuple[str, bytes]:
        """``(path, body)`` of ``prepared``: validated and serialized on first use, then reused.

        A ``ParamValidationError`` is an :class:`~llmport.errors.OptionError`
        raised before anything is sent, with botocore's report.
        """
        wire = prepared.wire
        if wire is None:
            request = call(
                input_error,
                self.serializer.serialize_to_request,
                prepared.payload,
                self.operation,
            )
            body = request["body"]
            wire = prepared.wire = (
                request["url_path"],
                body if isinstance(body, bytes) else body.encode("utf-8"),
            )
        return wire

    def signed(self, path: str, body: bytes, credentials: Any) -> Any:
        """A botocore ``AWSRequest`` for one attempt, SigV4-signed now (fresh timestamp)."""
        from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
        from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]

        request = AWSRequest(
            method="POST",
            url=self.endpoint_url + path,
            data=body,
            headers={"Content-Type": "application/json", "User-Agent": self.user_agent},
        )
        SigV4Auth(credentials, self.signing_name, self.region).add_auth(request)
        return request

    def send(self, path: str, body: bytes, credentials: Any) -> dict[str, Any]:
        """One signed POST on the client's HTTP session; the answer as ``client.converse``'s."""
        response = self.http.send(self.signed(path, body, credentials).prepare())
        return self.answer(response.status_code, response.headers, response.content)

    def answer(self, status: int, headers: Mapping[str, str], content: bytes) -> dict[str, Any]:
        """The answer as a dict (2xx), or raise the ``ClientError`` botocore would."""
        if status >= 300:
            self._raise(status, headers, content)
        try:
            answer = json.loads(content)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            # As botocore's parser: an empty answer, which the conversion rejects (retryable).
            answer = {}
        try:
            _decode_blobs(answer)
        except (binascii.Error, TypeError, AttributeError, ValueError):
            raise MalformedResponseError(
                f"{VENDOR}: the answer holds a malformed base64 member", provider=VENDOR
            ) from None
        answer["ResponseMetadata"] = {
            "RequestId": _header(headers, "x-amzn-requestid"),
            "HTTPStatusCode": status,
        }
        return answer

    def _raise(self, status: int, headers: Mapping[str, str], content: bytes) -> NoReturn:
        from botocore.awsrequest import HeadersDict
        from botocore.exceptions import ClientError  # type: ignore[import-untyped]

        response = {
            "status_code": status,
            "headers": HeadersDict({str(k): str(v) for k, v in headers.items()}),
            "body": content,
        }
        parsed = self.parser.parse(response, self.operation.output_shape)
        raise ClientError(parsed, self.operation.name)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:  # a plain dict from aiohttp's CIMultiDict copy keeps its casing
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return None if value is None else str(value)


def _decode_blobs(answer: dict[str, Any]) -> None:
    """Base64-decode, in place, every blob member a Converse answer's content can hold."""
    output = answer.get("output")
    message = output.get("message") if isinstance(output, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict) or "text" in block:
            continue  # the common case: nothing to decode
        _decode_media(block)
        if "toolResult" in block:
            for item in block["toolResult"].get("content") or ():
                _decode_media(item)
        guard = block.get("guardContent")
        if isinstance(guard, dict):
            _decode_media(guard)
        reasoning = block.get("reasoningContent")
        if isinstance(reasoning, dict) and isinstance(reasoning.get("redactedContent"), str):
            reasoning["redactedContent"] = base64.b64decode(reasoning["redactedContent"])


def _decode_media(block: dict[str, Any]) -> None:
    for kind in _MEDIA:
        media = block.get(kind)
        if isinstance(media, dict):
            source = media.get("source")
            if isinstance(source, dict) and isinstance(source.get("bytes"), str):
                source["bytes"] = base64.b64decode(source["bytes"])


def _botocore_agent() -> str:
    import botocore  # type: ignore[import-untyped]

    return f"Botocore/{botocore.__version__} llmport-bedrock"
