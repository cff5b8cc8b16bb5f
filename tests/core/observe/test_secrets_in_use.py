"""A block's own secrets (llmport.observe.secrets_in_use) and a redactor of those alone."""

from __future__ import annotations

import asyncio
import contextvars
import secrets as random_secrets
import threading

from llmport.observe.redaction import Redactor, redact, register_secret
from llmport.observe.secrets_in_use import note_in_use, secrets_in_use


def fresh(prefix: str = "LEAK") -> str:
    return f"{prefix}{random_secrets.token_hex(16)}"


def test_a_block_notes_what_is_registered_or_used_inside_it_and_nothing_before() -> None:
    before, inside, used, path = fresh(), fresh(), fresh(), fresh()
    register_secret(before)
    with secrets_in_use() as noted:
        register_secret(inside)
        register_secret(path, partial=False)  # not a credential (an MCP server's PATH)
        note_in_use([used])
    note_in_use([fresh()])  # after the block: nowhere to note
    assert noted.snapshot() == {inside, used}


def test_threads_and_tasks_started_in_the_block_note_into_it() -> None:
    in_thread, in_task = fresh(), fresh()
    with secrets_in_use() as noted:
        context = contextvars.copy_context()  # as llmport's worker threads do
        worker = threading.Thread(target=context.run, args=(note_in_use, [in_thread]))
        worker.start()
        worker.join()

        async def task() -> None:
            note_in_use([in_task])

        asyncio.run(task())
    assert noted.snapshot() == {in_thread, in_task}


def test_a_redactor_masks_its_own_secrets_and_shapes_not_the_registry() -> None:
    mine, registered = fresh("Mine-"), fresh("Other-")
    register_secret(registered)
    scoped = Redactor([mine, "short"])
    text = f"{mine[5:17]} / {registered[6:18]} / sk-proj-abcdefgh12345678"
    assert scoped.redact(text) == f"*** / {registered[6:18]} / sk-proj-***"
    assert redact(text).startswith(f"{mine[5:17]} / ***")  # the registry knows only the other
    assert scoped.secrets == {mine}
    assert scoped.redact_data({"a": [mine]}) == {"a": ["***"]}
    assert scoped.header_secrets({"x-echo": mine, "accept": "application/json"}) == (mine,)
