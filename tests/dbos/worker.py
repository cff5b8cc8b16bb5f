"""A worker process of the durable-run tests (run as a script; never imported by pytest).

    python worker.py resume DB_URL VENDOR_URL COUNTER WORKFLOW_ID [PAUSE_AT MARKER]
    python worker.py drain DB_URL VENDOR_URL WORKER_NAME [RUNS]

``resume``: run (or, launched again, resume) the durable tool loop
``count_up`` as WORKFLOW_ID and print its result as JSON. With PAUSE_AT the
tool's PAUSE_AT-th call writes MARKER and hangs before its side effect, for
the test to SIGKILL this process there. ``drain``: listen on the queue; with
RUNS, also enqueue RUNS runs and print their results once all are done.
With LLMPORT_TEST_APPROVALS set to a file, each call of the tool needs
approval, and the approver writes a line there for each call it is asked about.
With LLMPORT_TEST_GO set to a path, the worker imports and builds everything, then
waits for that file before it launches DBOS: a test starts the worker that will resume
a run while the first one still runs, and lets it go once the first is killed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import llmport_dbos
import llmport_openai.plugin
from llmport import Runtime, agentic_function, hookimpl
from llmport.provider.config import Config
from llmport.tools.policy import ToolCheck

MODE, DB_URL, VENDOR_URL = sys.argv[1:4]
APPROVALS = os.environ.get("LLMPORT_TEST_APPROVALS")
GO = os.environ.get("LLMPORT_TEST_GO")


class EachCallApproved:
    """Every call of a tool needs approval."""

    @hookimpl
    def llmport_tool_policy(self, check: ToolCheck) -> str:
        return "approve"


def approve(check: ToolCheck) -> bool:
    """Say yes, and note who was asked about which call."""
    assert APPROVALS is not None and check.call is not None
    with open(APPROVALS, "a") as f:
        f.write(f"{check.call.arguments['n']}\n")
    return True


rt = Runtime(
    model="openai:gpt-4o-mini",
    config=Config(),
    hooks=[llmport_openai.plugin, *([EachCallApproved()] if APPROVALS else [])],
    providers={"openai": {"api_key": "sk-fake-test", "base_url": VENDOR_URL + "/v1"}},
    approver=approve if APPROVALS else None,
)


def bump(n: int) -> str:
    """Count one more (a side effect: one line in the counter file)."""
    counter = Path(sys.argv[4])
    if len(sys.argv) > 7 and n == int(sys.argv[6]):
        Path(sys.argv[7]).write_text("paused")  # the test kills this process now
        time.sleep(60)
    with counter.open("a") as f:
        f.write(f"{n}\n")
    return f"counted {n}"


@agentic_function
def count_up(goal: int) -> str:
    """Count to ``goal`` with the tool, one call per turn."""
    return rt.exec(f"count to {goal}", tools=[bump])


@agentic_function
def answer(question: str) -> str:
    """One model call."""
    return rt.exec(question)


durable_count = llmport_dbos.durable(count_up, name="tests.count_up", sessions=DB_URL)
durable_answer = llmport_dbos.durable(answer, name="tests.answer")


def wait_for_go(seconds: float = 120.0) -> None:
    """Until the test says go (LLMPORT_TEST_GO exists), if it is to say so."""
    end = time.monotonic() + seconds
    while GO and not Path(GO).exists():
        if time.monotonic() > end:
            sys.exit("never told to go")
        time.sleep(0.02)


def main() -> None:
    wait_for_go()
    if MODE == "resume":
        workflow_id = sys.argv[5]
        llmport_dbos.launch(DB_URL, name="llmport-tests")  # recovers a pending run of this id
        if len(sys.argv) > 7:  # the first worker starts the run; the second only resumes it
            from dbos import SetWorkflowID

            with SetWorkflowID(workflow_id):
                durable_count.start(5)
        result = llmport_dbos.result(workflow_id)
        print(json.dumps({"result": result, "pid": os.getpid()}), flush=True)
        return
    name = sys.argv[4]
    llmport_dbos.launch(DB_URL, name="llmport-tests", executor_id=name)
    llmport_dbos.queue("runs", concurrency=3, polling_interval=0.05)
    if len(sys.argv) > 5:
        ids = [
            llmport_dbos.enqueue(durable_answer, f"run {i}", queue="runs", workflow_id=f"run-{i}")
            .workflow_id
            for i in range(int(sys.argv[5]))
        ]
        results = {wid: llmport_dbos.result(wid) for wid in ids}
        print(json.dumps(results), flush=True)
        return
    print("ready", flush=True)
    time.sleep(120)  # the test stops this worker


if __name__ == "__main__":
    main()
