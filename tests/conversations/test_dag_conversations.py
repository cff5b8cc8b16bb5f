"""The session DAG keeps thinking (for its vendor only) and context summaries."""

from __future__ import annotations

from conversation_helpers import runtime
from llmport import ContextPolicy, Session, TextBlock, ThinkingBlock, agentic_function
from llmport.messages.types import Request, Response, Usage
from llmport.testing import Script, respond


def thinking(vendor: str, text: str) -> object:
    def answer(request: Request) -> Response:
        blocks = [ThinkingBlock("mull", signature=f"sig-{vendor}", vendor=vendor), TextBlock(text)]
        return Response(text=text, blocks=blocks, usage=Usage(1, 1, requests=1))

    return respond(answer)


def test_the_dag_renders_thinking_back_to_its_vendor_only() -> None:
    a = Script([thinking("a", "first"), "second"], prefix="a")
    b = Script(["third"], prefix="b")
    rt = runtime(a, b, model="a:m")
    session = Session()
    results = []

    @agentic_function(session=session)
    def task() -> None:
        rt.exec("one")
        results.append(rt.run("two"))
        results.append(rt.run("three", model="b:m"))

    task()
    llm = [n for n in session.nodes() if n.kind == "llm"]
    assert llm[0].result["thinking"][0]["signature"] == "sig-a"  # recorded, signature and all
    to_a = a.requests[1].messages
    assert any(
        isinstance(x, ThinkingBlock) and x.signature == "sig-a" for m in to_a for x in m.blocks
    )
    to_b = b.requests[0].messages
    assert not any(isinstance(x, ThinkingBlock) for m in to_b for x in m.blocks)
    assert [d.vendor for d in results[1].dropped] == ["a"]


def test_a_context_summary_becomes_a_summary_node_that_later_execs_read() -> None:
    script = Script(["r1", "THE SUMMARY", "r2", "r3"])
    policy = ContextPolicy(max_tokens=400, strategy="summarize", keep_last=0)
    rt = runtime(script, context_policy=policy)
    session = Session()

    @agentic_function(session=session)
    def task() -> None:
        rt.exec("step 0 " + "z" * 240)
        rt.exec("big " + "b" * 1400)  # with the earlier context it would not fit
        rt.exec("small")

    task()
    (summary,) = [n for n in session.nodes() if n.kind == "summary"]
    assert summary.data["text"] == "THE SUMMARY" and summary.data["covers"] >= 1
    summary_calls = [r for r in script.requests if "Summarize" in r.messages[-1].text]
    assert len(summary_calls) == 1  # written once
    big, small = script.requests[2], script.requests[3]
    assert "THE SUMMARY" in big.messages[0].text
    # The next exec reads the summary node in place of what it covers: no new summary call.
    assert "THE SUMMARY" in small.messages[0].text
    assert all("step 0" not in m.text for m in small.messages)
