"""The error plumbing every plugin shares: statuses, retry-after, transports, translating."""

from __future__ import annotations

import traceback
from collections.abc import AsyncIterator, Iterator

import pytest
from llmport.controls.retry import retry_after_from_details
from llmport.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    LlmportError,
    MalformedResponseError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)
from llmport.observe.redaction import register_secret
from llmport.provider.translate import (
    answer_field,
    detach,
    status_error,
    translating,
    transport_error,
    vendor_boundary,
)

GATEWAY_KEY = "LEAKcustomproxykey-0123456789abcdef"


class VendorError(Exception):
    """Stands for an SDK exception: it holds the request, key and all."""

    def __init__(self, status: int) -> None:
        super().__init__(f"{status}: invalid key {GATEWAY_KEY}")
        self.status = status
        self.request_headers = {"authorization": f"Bearer {GATEWAY_KEY}"}


def translate(exc: BaseException) -> ProviderError | None:
    if isinstance(exc, VendorError):
        return status_error(exc.status, str(exc), provider="acme")
    return None


@pytest.mark.parametrize(
    ("status", "cls", "transient"),
    [
        (400, BadRequestError, False),
        (408, ProviderTimeoutError, True),
        (409, ProviderError, True),
        (429, RateLimitError, True),
        (500, OverloadedError, True),
        (529, OverloadedError, True),
    ],
)
def test_one_status_table_and_retry_rule(status: int, cls: type, transient: bool) -> None:
    err = status_error(status, "nope", provider="acme", headers={"retry-after-ms": "250"})
    assert type(err) is cls and err.retryable is transient and err.retry_after == 0.25
    flipped = status_error(status, "nope", provider="acme", headers={"x-should-retry": "false"})
    assert flipped.retryable is False


def test_google_retry_info() -> None:
    details = {
        "error": {
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]
        }
    }
    assert retry_after_from_details(details) == 7.0
    assert retry_after_from_details({"error": {}}) is None


def test_transport_errors_by_class_name() -> None:
    named = type("TimeoutException", (Exception,), {"__module__": "httpx2._exceptions"})
    reset = type("RemoteProtocolError", (Exception,), {"__module__": "httpcore._exceptions"})
    assert isinstance(transport_error(named(), "acme"), ProviderTimeoutError)
    assert isinstance(transport_error(reset(), "acme"), ProviderConnectionError)
    assert transport_error(ValueError("x"), "acme") is None


def _chain(exc: BaseException | None) -> list[BaseException]:
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def test_translating_leaves_no_vendor_exception_and_no_key() -> None:
    register_secret(GATEWAY_KEY)
    with pytest.raises(ProviderError) as info, translating("acme", translate):
        raise VendorError(401)
    err = detach(info.value)  # what the runtime does at its boundary
    assert err.__cause__ is None and err.__context__ is None
    assert all(isinstance(e, ProviderError) for e in _chain(err))
    text = "".join(traceback.format_exception(err))
    assert GATEWAY_KEY not in text and GATEWAY_KEY not in repr(err)
    assert err.vendor_error is not None and err.vendor_error.startswith("VendorError: 401")
    assert GATEWAY_KEY not in err.vendor_error


def test_secrets_given_to_translating_are_masked_literally() -> None:
    other = "customgatewaysecret-9f8e7d6c5b4a"
    mapper = translating("acme", lambda e: status_error(500, str(e), provider="acme"), [other])
    with pytest.raises(ProviderError) as info, mapper:
        raise RuntimeError(f"upstream said: {other}")
    assert other not in str(info.value) and other not in (info.value.vendor_error or "")


def test_foreign_exceptions_pass_unchanged() -> None:
    with pytest.raises(KeyError), translating("acme", translate):
        raise KeyError("a bug in the plugin")


def test_detach_cuts_foreign_links_from_errors_a_plugin_raises_itself() -> None:
    try:
        try:
            raise VendorError(403)
        except VendorError as exc:
            raise ConfigError("cannot create the client") from exc
    except ConfigError as err:
        detach(err)
        assert err.__cause__ is None and err.__context__ is None
    plain = ValueError("not ours")
    plain.__context__ = VendorError(500)
    assert detach(plain).__context__ is not None  # only llmport errors are touched


class Acme:
    """A provider-like owner: its methods reach the vendor through the boundary."""

    def translating(self) -> translating:
        return translating("acme", translate, [GATEWAY_KEY])

    @vendor_boundary
    def call(self) -> int:
        raise VendorError(401)

    @vendor_boundary
    async def acall(self) -> int:
        raise VendorError(401)

    @vendor_boundary
    def events(self) -> Iterator[int]:
        yield 1
        raise VendorError(401)

    @vendor_boundary
    async def aevents(self) -> AsyncIterator[int]:
        yield 1
        raise VendorError(401)

    @vendor_boundary
    def inner_with(self) -> int:
        with self.translating():  # the context manager chains __context__: the boundary cuts it
            raise VendorError(401)

    @vendor_boundary
    def bug(self) -> int:
        raise KeyError("a bug in the plugin")


class AcmeBatch:
    """A batch backend: the boundary of its provider."""

    def __init__(self) -> None:
        self.provider = Acme()

    @vendor_boundary
    def status(self) -> int:
        raise VendorError(401)


def _foreign(err: BaseException) -> list[str]:
    """Every non-llmport exception reachable through __cause__ / __context__."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [err]
    while todo:
        node = todo.pop()
        if node is None or any(node is s for s in seen):
            continue
        seen.append(node)
        todo += [node.__cause__, node.__context__]
    return [type(e).__name__ for e in seen if not isinstance(e, LlmportError)]


def _check(err: BaseException) -> None:
    assert isinstance(err, AuthenticationError)
    assert _foreign(err) == [] and err.__context__ is None
    assert GATEWAY_KEY not in "".join(traceback.format_exception(err))


async def test_the_boundary_leaves_nothing_foreign_in_the_chain_on_every_kind_of_method() -> None:
    acme = Acme()
    with pytest.raises(AuthenticationError) as info:
        acme.call()
    _check(info.value)
    with pytest.raises(AuthenticationError) as info:
        await acme.acall()
    _check(info.value)
    seen: list[int] = []
    with pytest.raises(AuthenticationError) as info:
        seen.extend(acme.events())
    _check(info.value)
    with pytest.raises(AuthenticationError) as info:
        async for n in acme.aevents():
            seen.append(n)
    _check(info.value)
    assert seen == [1, 1]
    with pytest.raises(AuthenticationError) as info:
        acme.inner_with()
    _check(info.value)
    with pytest.raises(AuthenticationError) as info:
        AcmeBatch().status()
    _check(info.value)


def test_the_boundary_lets_a_bug_pass_unchanged() -> None:
    with pytest.raises(KeyError):
        Acme().bug()


def test_the_context_manager_alone_leaves_the_vendor_exception_as_context() -> None:
    """Why the boundary is a decorator: ``raise`` in ``__exit__`` chains what it handles."""
    with pytest.raises(ProviderError) as info, translating("acme", translate):
        raise VendorError(401)
    assert isinstance(info.value.__context__, VendorError)


@pytest.mark.parametrize(
    "answer",
    [
        {},
        {"error": {"message": "quota"}},
        {"input_tokens": None},
        {"input_tokens": "37"},
        {"input_tokens": True},
    ],
)
def test_answer_field_refuses_what_is_not_the_success_shape(answer: dict[str, object]) -> None:
    with pytest.raises(MalformedResponseError):
        answer_field(answer, "input_tokens", int, "acme")


def test_answer_field_reads_dicts_and_objects() -> None:
    class Answer:
        input_tokens = 37

    assert answer_field({"input_tokens": 37}, "input_tokens", int, "acme") == 37
    assert answer_field(Answer(), "input_tokens", int, "acme") == 37
    with pytest.raises(MalformedResponseError):
        answer_field({"id": ""}, "id", str, "acme")
