"""Drift tests: every private ``botocore`` name the plugin uses still has its shape.

The plugin reaches these only through ``llmport_bedrock.sdk_internals``; a
botocore release that moves or reshapes one fails the test named after it.
"""

from __future__ import annotations

import base64
from typing import Any

import boto3
import pytest
from botocore.eventstream import EventStreamBuffer
from llmport_bedrock import sdk_internals
from llmport_bedrock.direct import Wire
from llmport_bedrock.eventstream import event_frame

KEYS = {"aws_access_key_id": "AKIDEXAMPLEFAKE", "aws_secret_access_key": "fake-secret"}


def client(**config: Any) -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1", **KEYS, **config)


def test_the_plugin_uses_only_the_listed_instance_attributes() -> None:
    assert sdk_internals.USED == ()
    assert sdk_internals.ON_INSTANCES == (
        ("botocore.client.BaseClient", "_endpoint"),
        ("botocore.httpsession.URLLib3Session", "_verify"),
    )


def test_http_session_is_the_clients_urllib3_session() -> None:
    from botocore.httpsession import URLLib3Session

    session = sdk_internals.http_session(client())
    assert isinstance(session, URLLib3Session)
    assert callable(session.send)


@pytest.mark.parametrize(
    ("verify", "expected"), [(False, False), ("/etc/bundle.pem", "/etc/bundle.pem")]
)
def test_session_verify_is_the_resolved_verify_setting(verify: Any, expected: Any) -> None:
    session = sdk_internals.http_session(client(verify=verify))
    assert sdk_internals.session_verify(session) == expected


def test_session_verify_defaults_to_true_without_one() -> None:
    assert sdk_internals.session_verify(object()) is True


def decode(wire: Wire, frame: bytes) -> Any:
    buffer = EventStreamBuffer()
    buffer.add_data(frame)
    (message,) = list(buffer)
    return wire.event(message)


def test_event_parser_made_from_the_protocol_class_parses_a_frame() -> None:
    """``Wire`` makes its event parser from the public class attribute, not the private one."""
    wire = Wire(client())
    delta = {"contentBlockIndex": 0, "delta": {"text": "hi"}}
    assert decode(wire, event_frame("contentBlockDelta", delta)) == {"contentBlockDelta": delta}


def test_event_parser_decodes_a_reasoning_blob() -> None:
    """Its default blob parser is the one botocore's parser gives its own (base64 to bytes)."""
    wire = Wire(client())
    blob = {"reasoningContent": {"redactedContent": base64.b64encode(b"\x00ab").decode()}}
    frame = event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": blob})
    delta = decode(wire, frame)["contentBlockDelta"]["delta"]
    assert delta == {"reasoningContent": {"redactedContent": b"\x00ab"}}
