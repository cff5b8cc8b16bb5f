"""What a run returns: :class:`RunResult` and its :class:`ToolCallRecord` entries."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import field
from typing import Any, Generic, Protocol, TypeVar, Unpack

from ..controls.options import CallParams
from ..errors import AttemptFailure, OptionError
from ..messages.types import MediaBlock, Message, StreamEvent, ToolCall, ToolResult, Usage
from ..slotted import dataclass, lazy_field

__all__ = ["Caller", "Continuation", "Dropped", "RunResult", "ToolCallRecord"]

T = TypeVar("T")


@dataclass(slots=True, frozen=True)
class ToolCallRecord:
    """One tool call made during a run, with its outcome and duration."""

    call: ToolCall
    result: ToolResult
    duration: float
    iteration: int
    error: str | None = None
    node_id: str | None = None
    #: ok | error | timeout | invalid_arguments | unknown_tool | denied | not_approved | repeated
    status: str = "ok"


@dataclass(slots=True, frozen=True)
class Dropped:
    """Part of a conversation that could not be sent to this run's vendor, and why.

    ``message`` is the index of the message it was in (in the conversation
    the run was given), ``block`` the block's type (``"thinking"``,
    ``"server_tool_call"``, ``"server_tool_result"``), ``vendor`` the vendor
    that produced it.
    """

    message: int
    block: str
    vendor: str
    reason: str


@dataclass(slots=True)
class RunResult(Generic[T]):
    """Everything about one ``exec``: what it returned and how it got there.

    ``value`` is typed by the call: ``rt.run(..., response_format=City).value``
    is a ``City``.

    The usage and the lists are made on first read when not given (the same
    values): a run waiting on its model request holds none of them.
    """

    output: Any = None
    text: str = ""
    model: str = ""
    usage: Usage = lazy_field(Usage)
    tool_calls: list[ToolCallRecord] = lazy_field(list)
    iterations: int = 0
    stop_reason: str = ""
    attempts: int = 0
    failures: list[AttemptFailure] = lazy_field(list)
    latency: float = 0.0
    node_id: str | None = None
    messages: list[Message] = lazy_field(list)
    choice: str | None = None
    #: The parsed result: with response_format the JSON value (an instance for a
    #: pydantic model / dataclass format), with choices the decision, else the text.
    value: T = None  # type: ignore[assignment]
    #: The readable thinking of every model turn of this run, concatenated.
    thinking: str = ""
    #: What the given conversation held that this vendor cannot take (never silently lost).
    dropped: list[Dropped] = lazy_field(list)
    #: ``tool_execution="manual"``: the calls of the last turn the caller is to run (in
    #: call order); empty when the run finished. Calls a policy refused are not here.
    pending_tool_calls: list[ToolCall] = lazy_field(list)
    #: The results already settled for the last turn's other calls (policy refusals);
    #: :meth:`tool_message` puts them beside the caller's results.
    settled: list[ToolResult] = lazy_field(list, repr=False)
    #: The name of the handoff tool the model called (the output is the target's return).
    handoff: str | None = None
    #: How to continue the run (the runtime and the call's parameters), manual runs only.
    continuation: Continuation | None = field(default=None, repr=False, compare=False)
    #: The last answer's id where the vendor keeps it on its server (OpenAI Responses:
    #: give it as ``previous_response_id=`` to continue there); None elsewhere.
    response_id: str | None = None

    @property
    def images(self) -> list[MediaBlock]:
        """The images the model answered with in this run (e.g. Gemini image models), in order.

        A shortcut over the assistant turns of :attr:`messages`; the images
        stay there too, so they go back in history on the next call.
        """
        return [
            block
            for message in self.messages
            if message.role == "assistant"
            for block in message.blocks
            if isinstance(block, MediaBlock) and block.type == "image"
        ]

    def tool_message(self, values: Mapping[str, Any]) -> Message:
        """The ``tool`` message answering every call of the last turn.

        ``values`` maps each pending call id to what its tool returned (a
        string, any JSON-able value, a :class:`~llmport.messages.types.ToolResult`) or to
        an exception (an error result). Calls a policy refused keep their
        refusal. Every pending id must be given, and nothing else
        (:class:`~llmport.errors.OptionError`). For ``exec(history=...)``::

            rt.run(history=[*result.messages, result.tool_message({...})], ...)
        """
        if not self.pending_tool_calls:
            raise OptionError("this run has no pending tool calls to answer")
        if not isinstance(values, Mapping):
            raise OptionError(
                f"give the results as {{call_id: value}}, got {type(values).__name__}"
            )
        ids = [c.id for c in self.pending_tool_calls]
        missing = [i for i in ids if i not in values]
        unknown = [k for k in values if k not in ids]
        if missing or unknown:
            parts = []
            if missing:
                parts.append(f"no result for pending call(s) {', '.join(map(repr, missing))}")
            if unknown:
                parts.append(f"no pending call has id(s) {', '.join(map(repr, unknown))}")
            names = ", ".join(f"{c.id} ({c.name})" for c in self.pending_tool_calls)
            raise OptionError(f"{'; '.join(parts)}; pending: {names}")
        by_id = {r.call_id: r for r in self.settled}
        last = self.messages[-1] if self.messages else None
        calls = list(last.tool_calls) if last is not None else list(self.pending_tool_calls)
        results = []
        for call in calls:
            if call.id in values:
                results.append(_result_of(call, values[call.id]))
            elif call.id in by_id:
                results.append(by_id[call.id])
        return Message("tool", tool_results=tuple(results))

    def continue_with(self, values: Mapping[str, Any]) -> RunResult[Any]:
        """Continue this conversation with the pending calls' results; a new RunResult.

        Same runtime and call parameters (still ``tool_execution="manual"``:
        the next result may have pending calls again).
        """
        rt, params = self._continue(values)
        return rt.run(**params)

    async def acontinue_with(self, values: Mapping[str, Any]) -> RunResult[Any]:
        """Async :meth:`continue_with`."""
        rt, params = self._continue(values)
        return await rt.arun(**params)

    def continue_stream(self, values: Mapping[str, Any]) -> Iterator[StreamEvent]:
        """:meth:`continue_with` as a stream (the last event is a FinalEvent)."""
        rt, params = self._continue(values)
        return rt.stream(**params)

    def acontinue_stream(self, values: Mapping[str, Any]) -> AsyncIterator[StreamEvent]:
        """Async :meth:`continue_stream`."""
        rt, params = self._continue(values)
        return rt.astream(**params)

    def _continue(self, values: Mapping[str, Any]) -> tuple[Caller, dict[str, Any]]:
        if self.continuation is None:
            raise OptionError(
                "only a run made with tool_execution='manual' can be continued "
                "(or give history= to a new call)"
            )
        message = self.tool_message(values)
        rt, params = self.continuation.runtime, dict(self.continuation.params)
        # The conversation so far already holds the DAG context and the first content.
        params.update(history=[*self.messages, message], context="")
        if self.model and not isinstance(params.get("model"), str):
            params["model"] = self.model  # the model that answered (after any fallback)
        if params.get("previous_response_id") and self.response_id:
            params["previous_response_id"] = self.response_id  # the chain goes on from here
        return rt, params


class Caller(Protocol):
    """What continues a run: :class:`llmport.Runtime`'s four ways to call a model."""

    def run(self, content: Any = None, **params: Unpack[CallParams]) -> RunResult[Any]: ...

    async def arun(self, content: Any = None, **params: Unpack[CallParams]) -> RunResult[Any]: ...

    def stream(
        self, content: Any = None, **params: Unpack[CallParams]
    ) -> Iterator[StreamEvent]: ...

    def astream(
        self, content: Any = None, **params: Unpack[CallParams]
    ) -> AsyncIterator[StreamEvent]: ...


@dataclass(slots=True, frozen=True)
class Continuation:
    """What :meth:`RunResult.continue_with` needs: the runtime and the call's parameters."""

    runtime: Caller
    params: Mapping[str, Any]


def _result_of(call: ToolCall, value: Any) -> ToolResult:
    """The result the caller gave for ``call``: an exception is an error result (redacted).

    A malformed value is the caller's input error (never a tool error told to
    the model): a ToolResult whose content is not text is left for the
    conversation check to refuse, a value nested too deep raises here.
    """
    from ..tools.tool import result_for, stringify

    if isinstance(value, ToolResult):
        if value.call_id != call.id:
            raise OptionError(f"the ToolResult given for {call.id!r} answers {value.call_id!r}")
        if not isinstance(value.content, str):
            return value  # refused before any request by the input check (MessageError)
    elif not isinstance(value, BaseException):
        stringify(value)  # MessageError for a value nested past the limit
    return result_for(call, value)
