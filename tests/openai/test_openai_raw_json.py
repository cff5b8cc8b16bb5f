"""Non-streamed answers are parsed once from the JSON body (no SDK response model).

``send`` takes the SDK's ``with_raw_response`` and reads the JSON itself: an
answer the SDK would have turned into a model must give the same Response,
a body that is not JSON or not shaped as the API's is a (retryable)
``MalformedResponseError``, and status errors still come from the SDK.
"""

from __future__ import annotations

from typing import Any

import pytest
from llmport import MalformedResponseError, RateLimitError
from llmport.testing.loopback import LoopbackServer, Reply
from support.openai_scenarios import chat_usage, completion, error_body, response_obj

CHAT = "openai:gpt-4o-mini"
RESPONSES = "openai-responses:gpt-5-mini"
CHAT_OK = Reply(json=completion("chatcmpl-ok", content="fine", usage=chat_usage(3, 1)))
RESPONSES_OK = Reply(
    json=response_obj(
        "resp_ok",
        [
            {
                "type": "message",
                "id": "msg_ok",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "fine", "annotations": []}],
            }
        ],
        usage=(3, 1, 0, 0),
    )
)

#: 200 answers that are JSON but not the API's shape.
BAD_SHAPES: list[tuple[str, Any]] = [
    ("chat-list", []),
    ("chat-null", None),
    ("chat-choice-not-object", {"id": "c", "choices": [5]}),
    ("chat-call-without-function", {"choices": [{"message": {"tool_calls": [{"id": "x"}]}}]}),
    ("responses-output-not-list", {"id": "r", "status": "completed", "output": 3}),
    ("responses-call-without-id", {"status": "completed", "output": [{"type": "function_call"}]}),
]


def _model_and_ok(case: str) -> tuple[str, Reply]:
    return (CHAT, CHAT_OK) if case.startswith("chat") else (RESPONSES, RESPONSES_OK)


@pytest.mark.parametrize(("case", "body"), BAD_SHAPES, ids=[c for c, _ in BAD_SHAPES])
def test_wrongly_shaped_answer_is_malformed_and_retried(
    drive: Any, runtime: Any, case: str, body: Any
) -> None:
    model, ok = _model_and_ok(case)
    with LoopbackServer([Reply(json=body), ok]) as server:
        rt = runtime(model, base_url=server.url + "/v1")
        run = drive.run(rt, content="hi")
    assert run.output == "fine"
    failure = run.failures[0].error
    assert isinstance(failure, MalformedResponseError) and failure.retryable, repr(failure)


@pytest.mark.parametrize("model", [CHAT, RESPONSES])
def test_a_body_that_is_not_json_is_malformed(drive: Any, runtime: Any, model: str) -> None:
    page = Reply(body=b"<html>gateway</html>", headers={"content-type": "text/html"})
    ok = CHAT_OK if model == CHAT else RESPONSES_OK
    with LoopbackServer([page, ok]) as server:
        rt = runtime(model, base_url=server.url + "/v1")
        run = drive.run(rt, content="hi")
    assert run.output == "fine"
    failure = run.failures[0].error
    assert isinstance(failure, MalformedResponseError) and failure.retryable, repr(failure)


@pytest.mark.parametrize("model", [CHAT, RESPONSES])
def test_no_sdk_response_model_is_built(
    drive: Any, runtime: Any, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openai._base_client as base

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the SDK built a response model")

    monkeypatch.setattr(base.BaseClient, "_process_response_data", refuse)
    ok = CHAT_OK if model == CHAT else RESPONSES_OK
    with LoopbackServer([ok]) as server:
        rt = runtime(model, base_url=server.url + "/v1")
        assert drive.run(rt, content="hi").output == "fine"


@pytest.mark.parametrize("model", [CHAT, RESPONSES])
def test_status_errors_still_come_from_the_sdk(drive: Any, runtime: Any, model: str) -> None:
    limited = Reply(
        status=429,
        headers={"retry-after": "1"},
        json=error_body("Rate limit reached", "requests", "rate_limit_exceeded"),
    )
    ok = CHAT_OK if model == CHAT else RESPONSES_OK
    with LoopbackServer([limited, ok]) as server:
        rt = runtime(model, base_url=server.url + "/v1")
        run = drive.run(rt, content="hi")
    assert run.output == "fine"
    failure = run.failures[0].error
    assert isinstance(failure, RateLimitError) and failure.retry_after == 1.0, repr(failure)
