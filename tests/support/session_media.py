"""Session media helpers: a screenshot tool's image through an agentic program, on any store.

``run_program(target)`` records two agentic calls into the session at
``target`` (a SQLite path or a PostgreSQL URL): ``look`` runs a tool loop
whose first tool returns ``image`` (three turns with it in history), then
``ask`` execs once, reading ``look`` from the DAG. The script keeps every
request, so a test sees what the model was sent.
"""

from __future__ import annotations

from typing import Any

from llmport import MediaBlock, Session, agentic_function, tool
from llmport.messages.types import Message
from llmport.sessions.agentic import render_dag_messages
from llmport.testing import Script, call_tools, reply

#: A small PNG (its magic bytes, then filler).
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 16


def run_program(target: Any, image: bytes = PNG) -> tuple[Session, Script]:
    """Run ``look`` then ``ask`` recording into a new session at ``target``."""

    @tool
    def screenshot() -> MediaBlock:
        """Take a screenshot."""
        return MediaBlock("image", "image/png", data=image, filename="shot.png")

    @tool
    def wait() -> str:
        """Wait a moment."""
        return "waited"

    script = Script(
        [
            call_tools(("screenshot", {})),
            call_tools(("wait", {})),
            call_tools(("wait", {})),
            reply("a red square"),
            reply("it was red"),
        ]
    )
    rt = script.runtime()

    @agentic_function(expose="full")
    def look() -> str:
        """Look at the screen."""
        return str(rt.exec("look at the screen", tools=[screenshot, wait]))

    @agentic_function
    def ask() -> str:
        """Ask about it."""
        return str(rt.exec("what did you see?"))

    with Session(target) as session:
        look()
        ask()
    return session, script


def images(messages: list[Message]) -> list[MediaBlock]:
    """Every media block of ``messages``, in order."""
    return [b for m in messages for b in m.blocks if isinstance(b, MediaBlock)]


def rendered(session: Session) -> list[Message]:
    """The whole session rendered as an exec would read it."""
    return render_dag_messages([n.id for n in session.nodes()], session)
