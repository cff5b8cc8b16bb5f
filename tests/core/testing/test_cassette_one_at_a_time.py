"""Two cassettes open at once would share vcrpy's process-wide patches: the second is refused."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from llmport import CassetteError
from llmport.testing import cassette


def test_a_second_cassette_in_another_thread_is_refused_naming_the_first(tmp_path: Path) -> None:
    opened, done = threading.Event(), threading.Event()

    def first() -> None:
        with cassette(tmp_path / "first.yaml"):
            opened.set()
            done.wait(30)

    thread = threading.Thread(target=first, name="recorder-a")
    thread.start()
    try:
        assert opened.wait(30)
        with (
            pytest.raises(CassetteError, match=r"first\.yaml.*recorder-a") as refused,
            cassette(tmp_path / "second.yaml"),
        ):
            pass
        assert "second.yaml" in str(refused.value)
    finally:
        done.set()
        thread.join(30)
    with cassette(tmp_path / "second.yaml") as later:  # the first one is closed: free again
        assert later.interactions == 0


def test_a_second_cassette_in_another_task_is_refused_naming_the_first(tmp_path: Path) -> None:
    async def main() -> str:
        opened, done = asyncio.Event(), asyncio.Event()

        async def first() -> None:
            async with cassette(tmp_path / "first.yaml"):
                opened.set()
                await done.wait()

        async def second() -> str:
            await opened.wait()
            try:
                async with cassette(tmp_path / "second.yaml"):
                    return "opened"
            except CassetteError as refused:
                return str(refused)
            finally:
                done.set()

        holder = asyncio.create_task(first(), name="recorder-a")
        message = await asyncio.create_task(second())
        await holder
        async with cassette(tmp_path / "second.yaml"):
            pass
        return message

    message = asyncio.run(main())
    assert "first.yaml" in message and "recorder-a" in message and "second.yaml" in message


def test_a_cassette_that_failed_to_open_does_not_hold_the_process(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(CassetteError, match="not UTF-8"), cassette(broken, record="none"):
        pass
    with cassette(tmp_path / "fine.yaml"):
        pass
