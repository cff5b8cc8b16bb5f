"""Retries: attempts, backoff with full jitter, Retry-After, classification."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from llmport import (
    AuthenticationError,
    BadRequestError,
    ContentError,
    ExecFailed,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    Runtime,
    TextDelta,
    UnsupportedFeatureError,
)
from llmport.controls.retry import Backoff, is_retryable
from llmport.errors import MalformedResponseError
from llmport.testing import Script, call_tools, fail, reply
from support.core_helpers import Driver, make_tool, scripted


class Sleeps:
    """Records the delays a Backoff asks for, in the sync and the async world."""

    def __init__(self) -> None:
        self.sync: list[float] = []
        self.async_: list[float] = []

    def sleep(self, delay: float) -> None:
        self.sync.append(delay)

    async def async_sleep(self, delay: float) -> None:
        self.async_.append(delay)

    def backoff(self, **kw: Any) -> Backoff:
        return Backoff(sleep=self.sleep, async_sleep=self.async_sleep, **kw)

    def taken(self, drive: Driver) -> list[float]:
        # The async driver must never block the loop with time.sleep.
        if drive.is_async:
            assert self.sync == []
            return self.async_
        assert self.async_ == []
        return self.sync


# --- Backoff ---------------------------------------------------------------------------------


def test_backoff_full_jitter_stays_within_the_exponential_cap() -> None:
    backoff = Backoff(initial=0.5, maximum=5.0, multiplier=2.0, rng=random.Random(7))
    for attempt, cap in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 5.0), (9, 5.0)]:
        delays = [backoff.delay(attempt) for _ in range(400)]
        assert all(0.0 <= d <= cap for d in delays), attempt
        # Full jitter: spread over the whole range, not clustered at the cap.
        assert min(delays) < cap * 0.1 and max(delays) > cap * 0.9, attempt


def test_backoff_is_reproducible_with_a_seeded_rng() -> None:
    a = Backoff(rng=random.Random(42))
    b = Backoff(rng=random.Random(42))
    assert [a.delay(n) for n in range(1, 6)] == [b.delay(n) for n in range(1, 6)]


def test_backoff_without_jitter_is_exactly_exponential() -> None:
    backoff = Backoff(initial=0.1, maximum=1.0, jitter=False)
    assert [backoff.delay(n) for n in range(1, 6)] == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0])


def test_retry_after_wins_and_is_capped() -> None:
    backoff = Backoff(max_retry_after=30.0, rng=random.Random(1))
    assert backoff.delay(1, retry_after=7.5) == 7.5
    assert backoff.delay(1, retry_after=600) == 30.0
    assert backoff.delay(1, retry_after=-3) == 0.0
    assert Backoff(respect_retry_after=False, jitter=False).delay(1, retry_after=7.5) == 0.5


def test_backoff_none_never_waits() -> None:
    assert Backoff.none().delay(5) == 0.0
    assert Backoff.none().delay(1, retry_after=10) == 0.0


# --- attempts through the runtime ----------------------------------------------------------


def test_max_retries_is_the_total_number_of_attempts(drive: Driver) -> None:
    script = Script([fail(ProviderConnectionError("reset")) for _ in range(4)])
    with pytest.raises(ExecFailed) as info:
        drive.exec(scripted(script, max_retries=4), "q")
    assert len(script.requests) == 4
    assert len(info.value.attempts) == 4


def test_max_retries_one_means_no_retry(drive: Driver) -> None:
    script = Script([fail(OverloadedError("busy", status=503)), reply("never")])
    with pytest.raises(ExecFailed, match="after 1 attempt:"):
        drive.exec(scripted(script, max_retries=1), "q")
    assert len(script.requests) == 1


def test_transient_failures_then_success(drive: Driver) -> None:
    script = Script(
        [
            fail(RateLimitError("429", status=429)),
            fail(OverloadedError("529", status=529)),
            reply("made it"),
        ]
    )
    result = drive.run(scripted(script, max_retries=3), "q")
    assert result.output == "made it"
    assert result.attempts == 3
    assert [type(f.error) for f in result.failures] == [RateLimitError, OverloadedError]


def test_exponential_backoff_between_attempts(drive: Driver) -> None:
    sleeps = Sleeps()
    script = Script([fail(ProviderTimeoutError("slow")) for _ in range(3)] + [reply("ok")])
    rt = scripted(script, max_retries=4, backoff=sleeps.backoff(initial=0.1, jitter=False))
    assert drive.exec(rt, "q") == "ok"
    assert sleeps.taken(drive) == pytest.approx([0.1, 0.2, 0.4])


def test_full_jitter_delays_are_used(drive: Driver) -> None:
    sleeps = Sleeps()
    script = Script([fail(ProviderConnectionError("x")) for _ in range(3)] + [reply("ok")])
    rt = scripted(script, max_retries=4, backoff=sleeps.backoff(initial=1.0, rng=random.Random(3)))
    drive.exec(rt, "q")
    expected = Backoff(initial=1.0, rng=random.Random(3))
    assert sleeps.taken(drive) == [expected.delay(1), expected.delay(2), expected.delay(3)]


def test_retry_after_is_honoured(drive: Driver) -> None:
    sleeps = Sleeps()
    script = Script([fail(RateLimitError("slow down", status=429, retry_after=2.5)), reply("ok")])
    rt = scripted(script, max_retries=2, backoff=sleeps.backoff(initial=0.01))
    result = drive.run(rt, "q")
    assert sleeps.taken(drive) == [2.5]
    assert result.failures[0].delay == 2.5


def test_async_retries_do_not_block_the_loop() -> None:
    script = Script([fail(OverloadedError("503", status=503)), reply("ok")])
    rt = scripted(script, max_retries=2, backoff=Backoff(initial=0.2, jitter=False))

    async def main() -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        assert await rt.async_exec("q") == "ok"
        task.cancel()
        return ticks

    assert asyncio.run(main()) >= 10


# --- classification ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        AuthenticationError("bad key", status=401),
        PermissionDeniedError("no access", status=403),
        BadRequestError("bad", status=400),
        NotFoundError("no such model", status=404),
        RateLimitError("quota exhausted", status=429, retryable=False),
        ProviderError("generic permanent"),
    ],
)
def test_permanent_errors_raise_their_typed_error_at_once(
    drive: Driver, error: ProviderError
) -> None:
    script = Script([fail(error), reply("never")])
    with pytest.raises(type(error)) as info:
        drive.exec(scripted(script, max_retries=5), "q")
    assert info.value is error
    assert not isinstance(info.value, ExecFailed)
    assert len(script.requests) == 1


def test_a_provider_may_mark_any_error_transient(drive: Driver) -> None:
    script = Script([fail(BadRequestError("conflict", status=409, retryable=True)), reply("ok")])
    assert drive.exec(scripted(script, max_retries=2), "q") == "ok"


@pytest.mark.parametrize(
    "cls",
    [
        RateLimitError,
        OverloadedError,
        ProviderTimeoutError,
        ProviderConnectionError,
        MalformedResponseError,
    ],
)
def test_transient_classes(cls: type[ProviderError]) -> None:
    assert cls("x").retryable is True
    assert is_retryable(cls("x"), plain_callable=False)
    assert not is_retryable(cls("x", retryable=False), plain_callable=False)


@pytest.mark.parametrize(
    "cls",
    [AuthenticationError, PermissionDeniedError, BadRequestError, NotFoundError, ProviderError],
)
def test_permanent_classes(cls: type[ProviderError]) -> None:
    assert cls("x").retryable is False
    assert not is_retryable(cls("x"), plain_callable=True)


def test_plugin_bug_is_not_retried(drive: Driver) -> None:
    # A provider classifies its errors; anything else is a bug, raised at once.
    script = Script([fail(KeyError("choices")), reply("never")])
    with pytest.raises(KeyError):
        drive.exec(scripted(script, max_retries=3), "q")
    assert len(script.requests) == 1


# --- plain call= functions -------------------------------------------------------------------


def counting(errors: list[BaseException], answer: str = "ok") -> tuple[Any, list[int]]:
    calls: list[int] = []

    def fn(content: Any, model: str, response_format: Any) -> str:
        calls.append(1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return answer

    return fn, calls


@pytest.mark.parametrize(
    "error",
    [
        ValueError("bad"),
        KeyError("k"),
        OSError("disk"),
        ConnectionError("reset"),
        RuntimeError("boom"),
    ],
)
def test_call_function_exceptions_are_retried(drive: Driver, error: Exception) -> None:
    fn, calls = counting([error])
    assert drive.exec(Runtime(call=fn, max_retries=2, backoff=Backoff.none()), "q") == "ok"
    assert len(calls) == 2


@pytest.mark.parametrize(
    "error",
    [
        TypeError("wrong"),
        NotImplementedError("later"),
        ContentError(0, "bad block"),
        UnsupportedFeatureError("v", "m", "thing"),
    ],
)
def test_call_function_type_and_input_errors_are_not_retried(
    drive: Driver, error: Exception
) -> None:
    fn, calls = counting([error])
    with pytest.raises(type(error)):
        drive.exec(Runtime(call=fn, max_retries=3, backoff=Backoff.none()), "q")
    assert len(calls) == 1


def test_call_function_returning_a_non_string_is_a_type_error(drive: Driver) -> None:
    calls: list[int] = []

    def fn(content: Any, model: str, response_format: Any) -> Any:
        calls.append(1)
        return {"not": "text"}

    with pytest.raises(TypeError, match="must return str"):
        drive.exec(Runtime(call=fn, max_retries=3, backoff=Backoff.none()), "q")
    assert calls == [1]


def test_async_call_function_is_retried_too() -> None:
    calls: list[int] = []

    async def fn(content: Any, model: str, response_format: Any) -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("timeout")
        return "ok"

    rt = Runtime(call=fn, max_retries=3, backoff=Backoff.none())
    assert asyncio.run(rt.async_exec("q")) == "ok"
    assert len(calls) == 3


# --- ExecFailed ----------------------------------------------------------------------------


SPEC_MESSAGE = """exec() failed after 3 attempts in observe():
  Attempt 1: ConnectionError: timeout
  Attempt 2: RateLimitError: 429 Too Many Requests
  Attempt 3: ConnectionError: timeout"""


def test_exec_failed_message_has_the_spec_format(drive: Driver) -> None:
    errors: list[BaseException] = [
        ConnectionError("timeout"),
        RateLimitError("429 Too Many Requests"),
        ConnectionError("timeout"),
    ]
    fn, calls = counting(errors)
    with pytest.raises(ExecFailed) as info:
        drive.exec(Runtime(call=fn, max_retries=3, backoff=Backoff.none()), "q")
    assert str(info.value) == SPEC_MESSAGE.replace(" in observe()", "")
    assert len(calls) == 3


def test_exec_failed_names_the_function() -> None:
    from llmport.errors import AttemptFailure

    attempts = [
        AttemptFailure(1, ConnectionError("timeout")),
        AttemptFailure(2, RateLimitError("429 Too Many Requests")),
        AttemptFailure(3, ConnectionError("timeout")),
    ]
    err = ExecFailed(attempts, function="observe")
    assert str(err) == SPEC_MESSAGE
    assert err.function == "observe"
    assert err.last_error is attempts[-1].error


def test_exec_failed_is_a_runtime_error_chained_to_the_last_failure(drive: Driver) -> None:
    last = ProviderConnectionError("third")
    script = Script(
        [
            fail(ProviderConnectionError("first")),
            fail(ProviderConnectionError("second")),
            fail(last),
        ]
    )
    with pytest.raises(RuntimeError) as info:
        drive.exec(scripted(script, max_retries=3), "q")
    err = info.value
    assert isinstance(err, ExecFailed)
    assert err.__cause__ is last and err.last_error is last
    assert [a.number for a in err.attempts] == [1, 2, 3]
    assert [str(a.error) for a in err.attempts] == ["first", "second", "third"]


def test_exec_failed_with_one_attempt_is_singular() -> None:
    from llmport.errors import AttemptFailure

    assert str(ExecFailed([AttemptFailure(1, OSError("x"))])).startswith(
        "exec() failed after 1 attempt:"
    )


# --- a retry never re-runs a tool ------------------------------------------------------------


def test_retry_resends_the_model_request_only(drive: Driver) -> None:
    ran: list[int] = []

    def act(n: int) -> str:
        """Act once."""
        ran.append(n)
        return "acted"

    script = Script(
        [call_tools(("act", {"n": 1})), fail(OverloadedError("503", status=503)), reply("finished")]
    )
    result = drive.run(
        scripted(script, max_retries=2), "q", tools=[make_tool(act, n={"type": "integer"})]
    )
    assert result.output == "finished"
    assert ran == [1]
    assert result.attempts == 3  # 1 for the first turn, 2 for the second
    assert len(script.requests) == 3
    assert script.requests[1].messages == script.requests[2].messages


# --- streaming ------------------------------------------------------------------------------


def test_stream_failing_before_any_text_is_retried(drive: Driver) -> None:
    script = Script([fail(OverloadedError("503", status=503)), reply("whole answer")])
    events = drive.stream(scripted(script, max_retries=2), "q")
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "whole answer"
    assert events[-1].result.attempts == 2


def test_retry_after_from_headers() -> None:
    import email.utils
    import time

    from llmport.controls.retry import retry_after_from_headers as parse

    assert parse(None) is None and parse({}) is None
    assert parse({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5  # ms wins
    assert parse({"retry-after": "2"}) == 2.0
    assert parse({"retry-after": "-3"}) == 0.0
    assert parse({"retry-after": "soon"}) is None
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (parse({"retry-after": date}) or 0) <= 30
