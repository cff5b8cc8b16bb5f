"""Background runs on OpenAI Responses (``background: true``).

OpenAI's guide "Background mode" and the API reference (Create, Retrieve and
Cancel a model response) give the calls, and the recorded
``background-poll`` / ``background-stream`` samples their shapes:

* start: ``POST /v1/responses`` with the run's body plus ``background: true``
  (and ``stream: true`` to stream it at once), answered with the response
  object in status ``queued`` (streamed: ``response.created`` first, with the id);
* poll: ``GET /v1/responses/{id}?stream=false``: ``queued``, ``in_progress``,
  then ``completed`` (or ``incomplete``, ``failed``, ``cancelled``) with the output;
* resume a stream: ``GET /v1/responses/{id}?stream=true&starting_after=N``,
  the events after sequence number ``N``;
* cancel: ``POST /v1/responses/{id}/cancel``.

Every call goes through the provider's cached clients, its raw-JSON path
(the SDK's SSE decoder, no response models) and its error translation.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any, Protocol
from urllib.parse import quote

from llmport.plugin_api import (
    BackgroundBackend,
    JobState,
    JobStatus,
    Polled,
    Prepared,
)
from llmport.provider.translate import answer_field, vendor_boundary
from llmport.provider.wire import loads

from . import sdk_internals
from .convert_out import ResponsesStream, responses_response
from .errors import stream_error


class ResponsesAPI(Protocol):
    """What this module uses of the Responses provider (``OpenAIResponsesProvider``)."""

    name: str
    path: str
    clients: Any

    def prepared_of(self, prepared: Prepared, stream: bool) -> Any: ...
    def post_args(self, p: Any, *, stream: bool, is_async: bool) -> dict[str, Any]: ...
    def sdk_types(self, is_async: bool) -> tuple[Any, Any]: ...
    def raw_response_type(self) -> Any: ...


#: OpenAI response status -> neutral job state.
STATES: dict[str, JobState] = {
    "queued": "queued",
    "in_progress": "running",
    "completed": "completed",
    "incomplete": "completed",  # an answer cut short (max_output_tokens): converted as such
    "failed": "failed",
    "cancelled": "cancelled",
}
#: Stream events after which the run has ended.
ENDS = ("response.completed", "response.incomplete", "response.failed", "response.cancelled")


class ResponsesBackground(BackgroundBackend):
    """The background mode of ``openai-responses:``."""

    def __init__(self, provider: Any) -> None:
        super().__init__(provider)
        self.api: ResponsesAPI = provider

    # -- requests ----------------------------------------------------------------------

    def _background(self, prepared: Prepared, stream: bool) -> Any:
        """The prepared run with ``background: true`` among its body fields."""
        p = self.api.prepared_of(prepared, stream)
        payload = dict(p.stream_payload if stream else p.payload)
        payload["extra_body"] = {**(payload.get("extra_body") or {}), "background": True}
        if stream:
            return replace(p, stream_payload=payload, wire=None, stream_wire=None)
        return replace(p, payload=payload, wire=None, stream_wire=None)

    def _run_path(self, vendor_id: str, tail: str = "") -> str:
        return f"{self.api.path}/{quote(vendor_id, safe='')}{tail}"

    def _get_args(
        self, query: dict[str, Any], stream: bool, is_async: bool, timeout: float | None = None
    ) -> dict[str, Any]:
        call: dict[str, Any] = {"extra_query": query}
        if timeout is not None:  # the run's timeout= bounds each read (else the SDK's 600 s)
            call["timeout"] = timeout
        args: dict[str, Any] = {
            "cast_to": self.api.raw_response_type(),
            "options": sdk_internals.request_options(call),
        }
        if stream:
            args["cast_to"], args["stream_cls"] = self.api.sdk_types(is_async=is_async)
            args["stream"] = True
        return args

    def _events_query(self, after: int | None) -> dict[str, Any]:
        return {"stream": "true"} if after is None else {"stream": "true", "starting_after": after}

    # -- start -------------------------------------------------------------------------

    @vendor_boundary
    def submit(self, prepared: Prepared) -> str:
        p = self._background(prepared, stream=False)
        client = self.api.clients.sync()
        http = client.post(self.api.path, **self.api.post_args(p, stream=False, is_async=False))
        return self._started(loads(http.content))

    @vendor_boundary
    async def asubmit(self, prepared: Prepared) -> str:
        p = self._background(prepared, stream=False)
        client = await self.api.clients.aclient()
        args = self.api.post_args(p, stream=False, is_async=True)
        http = await client.post(self.api.path, **args)
        return self._started(loads(http.content))

    def _started(self, body: Any) -> str:
        status(body, self.api.name)  # the shape check: a response object, not an error
        return str(answer_field(body, "id", str, self.api.name))

    @vendor_boundary
    def submit_stream(self, prepared: Prepared) -> Iterator[Any]:
        p = self._background(prepared, stream=True)
        client = self.api.clients.sync()
        args = self.api.post_args(p, stream=True, is_async=False)
        yield from relay(client.post(self.api.path, **args))

    @vendor_boundary
    async def submit_astream(self, prepared: Prepared) -> AsyncIterator[Any]:
        p = self._background(prepared, stream=True)
        client = await self.api.clients.aclient()
        args = self.api.post_args(p, stream=True, is_async=True)
        async for item in arelay(await client.post(self.api.path, **args)):
            yield item

    # -- poll, resume, cancel --------------------------------------------------------------

    @vendor_boundary
    def retrieve(self, vendor_id: str, prepared: Prepared | None) -> Polled:
        client = self.api.clients.sync()
        args = self._get_args({"stream": "false"}, stream=False, is_async=False)
        http = client.get(self._run_path(vendor_id), **args)
        return self._polled(loads(http.content), prepared)

    @vendor_boundary
    async def aretrieve(self, vendor_id: str, prepared: Prepared | None) -> Polled:
        client = await self.api.clients.aclient()
        args = self._get_args({"stream": "false"}, stream=False, is_async=True)
        http = await client.get(self._run_path(vendor_id), **args)
        return self._polled(loads(http.content), prepared)

    def _polled(self, body: Any, prepared: Prepared | None) -> Polled:
        state = status(body, self.api.name)
        if state.state == "failed":
            error = body.get("error") or {}
            failed = stream_error(
                error.get("message") or "the background run failed",
                error.get("code"),
                error.get("code"),
                provider=self.api.name,
            )
            return Polled(state, error=failed)
        if state.state != "completed":
            return Polled(state)
        restore = getattr(prepared, "restore", None)
        return Polled(state, responses_response(body, restore, self.api.name))

    @vendor_boundary
    def events(
        self, vendor_id: str, after: int | None, *, timeout: float | None = None
    ) -> Iterator[Any]:
        client = self.api.clients.sync()
        args = self._get_args(self._events_query(after), True, False, timeout)
        yield from relay(client.get(self._run_path(vendor_id), **args))

    @vendor_boundary
    async def aevents(
        self, vendor_id: str, after: int | None, *, timeout: float | None = None
    ) -> AsyncIterator[Any]:
        client = await self.api.clients.aclient()
        args = self._get_args(self._events_query(after), True, True, timeout)
        async for item in arelay(await client.get(self._run_path(vendor_id), **args)):
            yield item

    @vendor_boundary
    def cancel(self, vendor_id: str, prepared: Prepared | None) -> Polled:
        client = self.api.clients.sync()
        args = self._get_args({}, stream=False, is_async=False)
        http = client.post(self._run_path(vendor_id, "/cancel"), **args)
        return self._polled(loads(http.content), prepared)

    @vendor_boundary
    async def acancel(self, vendor_id: str, prepared: Prepared | None) -> Polled:
        client = await self.api.clients.aclient()
        args = self._get_args({}, stream=False, is_async=True)
        http = await client.post(self._run_path(vendor_id, "/cancel"), **args)
        return self._polled(loads(http.content), prepared)

    # -- events ------------------------------------------------------------------------------

    def converter(self, prepared: Prepared | None) -> ResponsesStream:
        return ResponsesStream(getattr(prepared, "restore", None), self.api.name)

    def sequence(self, event: Any) -> int | None:
        number = event.get("sequence_number") if isinstance(event, dict) else None
        return number if isinstance(number, int) else None

    def started(self, event: Any) -> str | None:
        response = event.get("response") if isinstance(event, dict) else None
        rid = response.get("id") if isinstance(response, dict) else None
        return rid if isinstance(rid, str) and rid else None

    def ended(self, event: Any) -> bool:
        return isinstance(event, dict) and event.get("type") in ENDS


def relay(stream: Any) -> Iterator[Any]:
    """An SDK stream's events (each one's JSON), the stream closed however it ends."""
    try:
        yield from stream
    finally:
        stream.close()


async def arelay(stream: Any) -> AsyncIterator[Any]:
    """Async :func:`relay`."""
    try:
        async for item in stream:
            yield item
    finally:
        await stream.close()


def status(body: Any, provider: str) -> JobStatus:
    """A response object's status, neutral (a MalformedResponseError if it is no response)."""
    rid = answer_field(body, "id", str, provider)
    raw = answer_field(body, "status", str, provider)
    state = STATES.get(raw, "running")  # a status newer than this table: not ended yet
    ended = state not in ("queued", "running")
    return JobStatus(
        id=rid,
        state=state,
        total=1,
        succeeded=1 if state == "completed" else 0,
        failed=1 if ended and state != "completed" else 0,
        raw=raw,
    )
