"""handoff(): the model hands the conversation to another agentic function."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_helpers import WAY_IDS, WAYS, events_via, run, runtime
from llmport import (
    CustomEvent,
    FinalEvent,
    Message,
    Session,
    TextBlock,
    ThinkingBlock,
    ToolCallStarted,
    ToolResult,
    ToolResultEvent,
    agentic_function,
    handoff,
    tool,
)
from llmport.cli.session import show
from llmport.messages.types import Request, Response, Usage
from llmport.testing import Script, call_tools, respond
from llmport.tools.context import RunContext
from llmport.tools.filters import chain, last_n_turns, remove_tool_calls
from rich.console import Console


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: paid twice"


def scripts() -> tuple[Script, Script]:
    triage = Script(
        [
            call_tools(("lookup", {"order": "42"})),
            call_tools(("transfer_to_billing", {}), text="Passing you to billing."),
        ],
        prefix="a",
    )
    specialist = Script(["Refund issued."], prefix="b")
    return triage, specialist


def make(filter_: Any = None) -> tuple[Any, Script, Script, Any]:
    triage, specialist = scripts()
    rt = runtime(triage, specialist, model="a:m")

    @agentic_function(render_range={"callers": 0})
    async def billing(conversation: list[Message]) -> dict[str, Any]:
        """Billing: refunds and invoices."""
        reply = await rt.async_exec(conversation, model="b:m")
        return {"answer": reply, "seen": len(conversation)}

    return rt, triage, specialist, handoff(billing, input_filter=filter_)


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_the_target_answers_for_the_exec(way: tuple[str, bool]) -> None:
    rt, triage, specialist, to_billing = make()
    result = await run(way, rt, "I was charged twice", tools=[lookup, to_billing])
    assert result.output == {"answer": "Refund issued.", "seen": 5}
    assert result.value == result.output and result.handoff == "transfer_to_billing"
    offered = {t.name: t for t in triage.requests[0].tools}
    assert offered["transfer_to_billing"].description == "Billing: refunds and invoices."
    assert offered["transfer_to_billing"].parameters["properties"] == {}
    sent = specialist.requests[0].messages  # the whole conversation, on another vendor
    assert "billing(conversation='<5 messages handed off>')" in sent[0].text  # its own call
    sent = sent[1:]
    assert [m.role for m in sent] == ["user", "assistant", "tool", "assistant", "tool"]
    assert sent[-1].tool_results[0].content == "Transferred to billing."
    assert len(triage.requests) == 2  # the triage loop ended at the handoff


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_filter_removes_tool_calls_from_the_first_request(mode: str) -> None:
    rt, _, specialist, to_billing = make(remove_tool_calls)
    events = await events_via(mode, rt, "I was charged twice", tools=[lookup, to_billing])
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.result.output["seen"] == 2
    body = specialist.requests[0]
    assert [(m.role, m.text) for m in body.messages[1:]] == [
        ("user", "I was charged twice"),
        ("assistant", "Passing you to billing."),
    ]
    assert not any(m.tool_calls or m.tool_results for m in body.messages)
    started = [e.call.name for e in events if isinstance(e, ToolCallStarted)]
    assert started == ["lookup", "transfer_to_billing"]


@tool
def refund(order: str, ctx: RunContext[None]) -> str:
    """Refund an order, reporting progress."""
    ctx.stream_writer(f"checking {order}")
    ctx.stream_writer(f"refunding {order}")
    return f"refunded {order}"


@pytest.mark.parametrize("target_kind", ["sync", "async"])
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_targets_tool_progress_reaches_the_callers_stream(
    mode: str, target_kind: str
) -> None:
    """docs/agents.md: the specialist's progress lines arrive live in the caller's stream."""
    triage = Script([call_tools(("transfer_to_billing", {}))], prefix="a")
    specialist = Script([call_tools(("refund", {"order": "A-17"})), "Refunded A-17."], prefix="b")
    rt = runtime(triage, specialist, model="a:m")

    if target_kind == "sync":

        @agentic_function
        def billing(conversation: list[Message]) -> str:
            """Billing."""
            return rt.exec(conversation, model="b:m", tools=[refund])

    else:

        @agentic_function
        async def billing(conversation: list[Message]) -> str:  # type: ignore[misc]
            """Billing."""
            return await rt.async_exec(conversation, model="b:m", tools=[refund])

    events = await events_via(mode, rt, "charged twice", tools=[handoff(billing)])
    progress = [(e.payload, e.tool_name) for e in events if isinstance(e, CustomEvent)]
    assert progress == [("checking A-17", "refund"), ("refunding A-17", "refund")]
    # Live: while the target runs, before the handoff's own result and the final event.
    handed = next(
        i
        for i, e in enumerate(events)
        if isinstance(e, ToolResultEvent) and e.result.name == "transfer_to_billing"
    )
    assert all(i < handed for i, e in enumerate(events) if isinstance(e, CustomEvent))
    assert isinstance(events[-1], FinalEvent) and events[-1].result.output == "Refunded A-17."


def test_filters() -> None:
    conv = [
        Message("system", (TextBlock("rules"),)),
        Message("user", (TextBlock("one"),)),
        Message("assistant", (TextBlock("r1"),)),
        Message("user", (TextBlock("two"),)),
        Message("assistant", tool_calls=(call_tools(("x", {})).tool_calls[0],)),
        Message("tool", tool_results=(ToolResult("c", "x", "done"),)),
        Message("assistant", (TextBlock("r2"),)),
    ]
    assert [m.text for m in last_n_turns(1)(conv)] == ["rules", "two", "", "", "r2"]
    assert [m.text for m in last_n_turns(5)(conv)] == [m.text for m in conv]
    both = chain(remove_tool_calls, last_n_turns(1))(conv)
    assert [m.text for m in both] == ["rules", "two", "r2"]
    with pytest.raises(ValueError):
        last_n_turns(0)


def test_handoff_checks_its_target() -> None:
    def plain(conversation: list[Message]) -> str:
        return ""

    with pytest.raises(TypeError, match="agentic_function"):
        handoff(plain)

    @agentic_function
    def no_params() -> str:
        return ""

    with pytest.raises(TypeError, match="first parameter"):
        handoff(no_params)

    @agentic_function
    def target(conversation: list[Message]) -> str:
        return ""

    made = handoff(target, name="escalate", description="Escalate.")
    assert (made.tool.name, made.tool.description) == ("escalate", "Escalate.")


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_inside_a_nested_agentic_function_the_dag_links_both_sides(
    mode: str, tmp_path: Path
) -> None:
    rt, _, _, to_billing = make(remove_tool_calls)
    session = Session(tmp_path / "s.sqlite")

    @agentic_function(session=session)
    async def triage(question: str) -> Any:
        """Route the question."""
        return (await run((mode, False), rt, question, tools=[lookup, to_billing])).output

    @agentic_function(session=session)
    async def support(question: str) -> Any:
        return await triage(question)

    out = await support("I was charged twice")
    assert out["answer"] == "Refund issued."
    nodes = {n.id: n for n in session.nodes()}
    (hand,) = [n for n in nodes.values() if n.kind == "handoff"]
    source, target = nodes[hand.data["from"]], nodes[hand.data["to"]]
    assert hand.parent is source and source.kind == "llm" and source.parent.name == "triage"
    assert target.kind == "function" and target.name == "billing"
    assert target.parent is source.parent  # called from inside triage's exec
    assert hand.status == "ok" and hand.result["result"]["answer"] == "Refund issued."
    assert source.result["output"]["answer"] == "Refund issued."
    session.close()
    reopened = Session(tmp_path / "s.sqlite", id=session.id)
    assert [n.kind for n in reopened.nodes()].count("handoff") == 1
    console = Console(record=True, width=160, color_system=None)
    assert show(str(tmp_path / "s.sqlite"), False, console) == 0
    text = console.export_text()
    assert f"{hand.id} handoff transfer_to_billing  ok" in text
    assert f"{source.id} -> {target.id} billing" in text


def test_a_failing_target_is_recorded_and_raised() -> None:
    triage = Script([call_tools(("transfer_to_broken", {}))], prefix="a")
    rt = runtime(triage)
    session = Session()

    @agentic_function
    def broken(conversation: list[Message]) -> str:
        raise RuntimeError("specialist unavailable")

    @agentic_function(session=session)
    def task() -> Any:
        return rt.exec("help", tools=[handoff(broken)])

    with pytest.raises(RuntimeError, match="unavailable"):
        task()
    (hand,) = [n for n in session.nodes() if n.kind == "handoff"]
    assert hand.status == "error" and hand.result["error"]["type"] == "RuntimeError"


def test_across_vendors_the_other_vendors_thinking_is_dropped_and_listed() -> None:
    def thinks(request: Request) -> Response:
        blocks = [ThinkingBlock("hmm", signature="sig-a", vendor="a"), TextBlock("over to b")]
        calls = call_tools(("transfer_to_expert", {})).tool_calls
        return Response(
            text="over to b",
            blocks=blocks,
            tool_calls=calls,
            usage=Usage(1, 1, requests=1),
            stop_reason="tool_use",
        )

    a = Script([respond(thinks)], prefix="a")
    b = Script(["expert answer"], prefix="b")
    rt = runtime(a, b, model="a:m")

    @agentic_function
    def expert(conversation: list[Message]) -> Any:
        return rt.run(conversation, model="b:m")

    result = rt.run("hard question", tools=[handoff(expert)])
    inner = result.output
    assert inner.text == "expert answer"
    assert [(d.vendor, d.block) for d in inner.dropped] == [("a", "thinking")]
    assert not any(isinstance(x, ThinkingBlock) for m in b.requests[0].messages for x in m.blocks)
