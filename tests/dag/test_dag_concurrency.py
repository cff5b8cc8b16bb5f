"""Parents follow call nesting across threads, asyncio tasks and gather."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor

from llmport import Session, agentic_function, tool
from llmport.testing import Script, call_tools, reply


def test_threads_with_copied_context_get_the_right_parent() -> None:
    script = Script(["ok"] * 4)
    rt = script.runtime()

    @agentic_function
    def child(i: int) -> str:
        return str(rt.exec(f"child {i}"))

    @agentic_function
    def parent() -> None:
        threads = [threading.Thread(target=contextvars.copy_context().run, args=(child, i))
                   for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    with Session() as session:
        parent()
    top = session.node("n1")
    children = [n for n in session.nodes() if n.name == "child"]
    assert len(children) == 4 and all(c.parent is top and c.status == "ok" for c in children)
    for c in children:
        (llm,) = c.children or []
        assert llm.kind == "llm" and llm.data["reads"][0] == "n1" and llm.data["reads"][-1] == c.id
    assert sorted(n.seq for n in session.nodes()) == list(range(1, 10))


def test_asyncio_tasks_and_gather_get_the_right_parent() -> None:
    # Each child's reply is delayed so all of them start before any finishes.
    script = Script([reply("a", delay=0.05), reply("b", delay=0.05), reply("c", delay=0.05), "d"])
    rt = script.runtime()

    @agentic_function
    async def child(i: int) -> str:
        return str(await rt.async_exec(f"child {i}"))

    @agentic_function
    async def parent() -> str:
        task = asyncio.create_task(child(0))
        gathered = await asyncio.gather(child(1), child(2))
        await task
        return str(await rt.async_exec("sum up")) + "".join(gathered)

    with Session() as session:
        asyncio.run(parent())
    top = session.node("n1")
    children = [n for n in session.nodes() if n.name == "child"]
    assert [c.parent for c in children] == [top, top, top]
    for c in children:
        (llm,) = c.children or []
        # Siblings ran concurrently: none of them had finished, so none is read.
        assert llm.data["reads"] == ["n1", c.id]
    final = [n for n in session.nodes() if n.kind == "llm" and n.parent is top]
    assert final[0].data["reads"] == ["n1", *(c.id for c in children)]


def test_parallel_tools_running_agentic_functions_nest_under_the_frame() -> None:
    script = Script([call_tools(("research", {"topic": "a"}), ("research", {"topic": "b"})),
                     "inner", "inner", "both done"])
    rt = script.runtime()

    @agentic_function
    def study(topic: str) -> str:
        return str(rt.exec(f"study {topic}"))

    @tool
    def research(topic: str) -> str:
        """Research a topic."""
        return study(topic)

    @agentic_function
    def main() -> str:
        return str(rt.exec("go", tools=[research]))

    with Session() as session:
        assert main() == "both done"
    main_node = session.node("n1")
    studies = [n for n in session.nodes() if n.name == "study"]
    assert len(studies) == 2 and all(s.parent is main_node for s in studies)
    tools = [n for n in session.nodes() if n.kind == "tool"]
    assert [t.parent.name for t in tools if t.parent] == ["scripted:test", "scripted:test"]


def test_gathered_top_level_calls_share_the_bound_session() -> None:
    script = Script(["x", "y"])
    rt = script.runtime()

    @agentic_function
    async def job(i: int) -> str:
        return str(await rt.async_exec(f"job {i}"))

    async def main() -> None:
        with Session() as session:
            await asyncio.gather(job(1), job(2))
        assert [n.parent_id for n in session.nodes() if n.kind == "function"] == [None, None]
        assert len(session.roots()) == 2

    asyncio.run(main())


def test_many_threads_recording_into_one_sqlite_session(tmp_path: object) -> None:
    path = f"{tmp_path}/threads.sqlite"
    rt = Script(["ok"] * 64).runtime()

    @agentic_function
    def work(i: int) -> str:
        return str(rt.exec(f"work {i}", context=""))

    with Session(path) as session, ThreadPoolExecutor(8) as pool:
        # Copy the context in the submitting thread: it holds the bound session.
        futures = [pool.submit(contextvars.copy_context().run, work, i) for i in range(64)]
        results = [f.result() for f in futures]
    assert results == ["ok"] * 64
    reopened = Session(path, id=session.id)
    assert [n.seq for n in reopened.nodes()] == list(range(1, 129))
    assert [(n.kind, n.status) for n in reopened.nodes()] == [
        (n.kind, n.status) for n in session.nodes()]
    assert all(n.status == "ok" for n in reopened.nodes())
    reopened.close()
