"""Vendor boundary, input boundary and secrets on every public path, every target, both key formats.

ONE table, :data:`PATHS`, names every path of the public API and how to drive
it. A vendor path (``drive``) runs for every target in ``wire.TARGETS`` (but
those its ``not_for`` names, with the reason) and both key formats
("standard", vendor-shaped, and the shapeless "custom" one); in one runtime
it takes three turns against the loopback "vendor":

* I2: given malformed input it raises an :class:`~llmport.errors.InputError`
  before any request (the server counts them);
* I1 + I6: the vendor answers 401 quoting the key whole, 12 characters of its
  middle and its last 12 characters, and every auth header it received: the
  call raises an :class:`AuthenticationError` (an llmport error), no
  exception reachable through ``__cause__`` / ``__context__`` (recursively,
  and each attempt's) is foreign, and no part of the key is in the error,
  its chain or the logs (DEBUG for the "custom" format, the default levels
  for "standard": at DEBUG a vendor SDK may send another way);
* I1: the vendor answers ``200 {}`` where its success shape was due: a
  :class:`MalformedResponseError`, never an empty success.

A path that reaches no vendor (``mcp serve``, the CLI's local commands,
``model_info``) names its own check (``offline``), run with both key formats
in the environment.

:func:`test_every_public_path_is_in_the_table` lists the public API from the
code (Runtime, RunResult and BatchJob methods, the CLI's subcommands, the MCP
plugin's entry points): a path that is neither in :data:`PATHS` nor in
:data:`NOT_A_PATH` (with its reason) fails the suite.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path as FilePath
from typing import Any

import llmport
import pytest
from durable_paths import adurable_run, durable_paths_dbos, durable_run  # noqa: F401 (fixture)
from embed_targets import EMBED_TARGETS, NO_EMBEDDINGS, embed_model
from image_targets import NO_IMAGES, image_model
from invariant_checks import (
    JOB_IDS,
    NO_BATCH,
    NO_COUNT,
    LeakyToolset,
    PartialLeakCheck,
    attempt_errors,
    batch_options,
    batch_settings,
    debug_logging,
    deep,
    echo,
    ended_job,
    foreign_exceptions,
    key_echo_reply,
    serve_calls,
)
from llmport import Runtime, agentic_function, async_fix, errors, fix, handoff
from llmport.cli.main import build_parser, main
from llmport.engine.jobs.background import BackgroundJob
from llmport.engine.jobs.batch import BatchJob
from llmport.engine.result import RunResult
from llmport.errors import (
    AuthenticationError,
    InputError,
    LlmportError,
    MalformedResponseError,
)
from llmport.messages.types import Message, TextBlock, ToolCall
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from llmport.tools.tool import Tool
from llmport_mcp import MCPServer
from wire import PROFILE_TARGETS, TARGETS, Wire, make_runtime

KEY_FORMATS = ("standard", "custom")
ECHO_KINDS = ("whole", "middle", "tail")
DEMO = FilePath(__file__).resolve().parent.parent / "mcp" / "servers" / "demo_server.py"


@dataclass
class Ctx:
    """What a driver gets: the target, its runtime (pointed at the loopback) and the server."""

    wire: Wire
    rt: Runtime
    server: LoopbackServer
    fmt: str
    creds: dict[str, str]
    #: Where a CLI path's output is captured.
    capsys: pytest.CaptureFixture[str]
    #: The MCP demo server of the module (its process is started once).
    mcp: MCPServer
    #: Feed the path malformed input (the I2 turn) instead of a well-formed call.
    malformed: bool = False


Drive = Callable[[Ctx], Awaitable[Any]]


class CliExit(Exception):
    """A CLI path's nonzero exit, carrying what it printed (the error of the CLI "call")."""

    def __init__(self, code: int, printed: str) -> None:
        super().__init__(f"exit status {code}: {printed}")
        self.code, self.printed = code, printed


@dataclass(frozen=True)
class Path:
    """One path of the public API and how the invariants are checked on it."""

    name: str
    #: The public names this path takes (what the meta test matches the code against).
    api: tuple[str, ...]
    #: A vendor path: drives the path once on ``Ctx`` (raises what the path raised).
    drive: Drive | None = None
    #: Replies the vendor gives before the turn under test (a first tool-call turn...).
    before: Callable[[Wire], list[Reply]] = lambda wire: []
    #: target id -> why this path cannot apply to it.
    not_for: dict[str, str] = field(default_factory=dict)
    #: A path that reaches no vendor: its own I1/I2/I6 check, given the key format.
    offline: Callable[[str, pytest.CaptureFixture[str]], Awaitable[None]] | None = None


# --- the vendor paths' drivers ---------------------------------------------------------------

#: The malformed content every content-taking path is given (I2).
BAD_CONTENT = 123
#: A value nested past every limit (built once: 20 000 levels take a while).
TOO_DEEP = deep()


def content(ctx: Ctx) -> Any:
    return BAD_CONTENT if ctx.malformed else "hi"


async def exec_(ctx: Ctx) -> Any:
    return ctx.rt.exec(content(ctx))


async def async_exec(ctx: Ctx) -> Any:
    return await ctx.rt.async_exec(content(ctx))


async def run(ctx: Ctx) -> Any:
    return ctx.rt.run(content(ctx))


async def arun(ctx: Ctx) -> Any:
    return await ctx.rt.arun(content(ctx))


async def stream(ctx: Ctx) -> Any:
    return list(ctx.rt.stream(content(ctx)))


async def astream(ctx: Ctx) -> Any:
    return [event async for event in ctx.rt.astream(content(ctx))]


async def count_tokens(ctx: Ctx) -> Any:
    return ctx.rt.count_tokens(content(ctx))


async def acount_tokens(ctx: Ctx) -> Any:
    return await ctx.rt.acount_tokens(content(ctx))


def batch_requests(ctx: Ctx) -> list[dict[str, Any]]:
    return [{"custom_id": "a", "content": content(ctx)}]


async def batch(ctx: Ctx) -> Any:
    return ctx.rt.batch(batch_requests(ctx), batch_options=batch_options(ctx.wire))


async def abatch(ctx: Ctx) -> Any:
    return await ctx.rt.abatch(batch_requests(ctx), batch_options=batch_options(ctx.wire))


def job(ctx: Ctx) -> BatchJob:
    """The existing job (malformed: its id without the ``provider:`` prefix)."""
    vendor_id = JOB_IDS[ctx.wire.id]
    return ctx.rt.batch_job(vendor_id if ctx.malformed else f"{ctx.wire.provider}:{vendor_id}")


async def status(ctx: Ctx) -> Any:
    return job(ctx).status()


async def astatus(ctx: Ctx) -> Any:
    return await job(ctx).astatus()


async def wait(ctx: Ctx) -> Any:
    return job(ctx).wait(poll=0.0)


async def wait_async(ctx: Ctx) -> Any:
    return await job(ctx).wait_async(poll=0.0)


async def results(ctx: Ctx) -> Any:
    return job(ctx).results()


async def aresults(ctx: Ctx) -> Any:
    return await job(ctx).aresults()


async def cancel(ctx: Ctx) -> Any:
    return job(ctx).cancel()


async def acancel(ctx: Ctx) -> Any:
    return await job(ctx).acancel()


#: Every target but OpenAI Responses refuses background runs before any request.
NO_BACKGROUND = {
    w.id: "no background mode: submit is refused typed before any request "
    "(test_contract_server_state)"
    for w in TARGETS
    if w.id != "openai-responses"
}


#: Conversation objects exist on OpenAI Responses only; elsewhere refused before any request.
NO_CONVERSATIONS = {
    w.id: "no conversation objects: refused typed before any request (test_contract_server_state)"
    for w in TARGETS
    if w.id != "openai-responses"
}


async def create_conversation(ctx: Ctx) -> Any:
    provider: Any = 123 if ctx.malformed else ctx.wire.provider
    return ctx.rt.create_conversation(provider=provider)


async def acreate_conversation(ctx: Ctx) -> Any:
    provider: Any = 123 if ctx.malformed else ctx.wire.provider
    return await ctx.rt.acreate_conversation(provider=provider)


async def delete_conversation(ctx: Ctx) -> Any:
    conversation: Any = 123 if ctx.malformed else "conv_1"
    return ctx.rt.delete_conversation(conversation, provider=ctx.wire.provider)


async def adelete_conversation(ctx: Ctx) -> Any:
    conversation: Any = 123 if ctx.malformed else "conv_1"
    return await ctx.rt.adelete_conversation(conversation, provider=ctx.wire.provider)


async def submit(ctx: Ctx) -> Any:
    return ctx.rt.submit(content(ctx))


async def asubmit(ctx: Ctx) -> Any:
    return await ctx.rt.asubmit(content(ctx))


def background(ctx: Ctx) -> BackgroundJob:
    """A background run resumed by id (malformed: its id without the ``provider:`` prefix)."""
    return ctx.rt.background_job("resp_abc" if ctx.malformed else f"{ctx.wire.provider}:resp_abc")


async def bg_status(ctx: Ctx) -> Any:
    return background(ctx).status()


async def bg_astatus(ctx: Ctx) -> Any:
    return await background(ctx).astatus()


async def bg_wait(ctx: Ctx) -> Any:
    return background(ctx).wait(poll=0.0)


async def bg_wait_async(ctx: Ctx) -> Any:
    return await background(ctx).wait_async(poll=0.0)


async def bg_result(ctx: Ctx) -> Any:
    return background(ctx).result()


async def bg_aresult(ctx: Ctx) -> Any:
    return await background(ctx).aresult()


async def bg_cancel(ctx: Ctx) -> Any:
    return background(ctx).cancel()


async def bg_acancel(ctx: Ctx) -> Any:
    return await background(ctx).acancel()


async def bg_stream(ctx: Ctx) -> Any:
    return list(background(ctx).stream())


async def bg_astream(ctx: Ctx) -> Any:
    return [event async for event in background(ctx).astream()]


def lookup_tool() -> Tool:
    return Tool.from_schema(
        "lookup", "Look up.", {"type": "object", "properties": {}}, lambda **kw: "ok"
    )


def tool_turn(wire: Wire) -> list[Reply]:
    return [wire.tool_call_reply("lookup", {}, "call_1")]


def answers(ctx: Ctx, first: RunResult[Any]) -> dict[str, Any]:
    """The values for the pending calls of ``first`` (malformed: nested too deep)."""
    value: Any = TOO_DEEP if ctx.malformed else "ok"
    return {call.id: value for call in first.pending_tool_calls}


async def continue_with(ctx: Ctx) -> Any:
    first = ctx.rt.run("look it up", tools=[lookup_tool()], tool_execution="manual")
    return first.continue_with(answers(ctx, first))


async def acontinue_with(ctx: Ctx) -> Any:
    first = await ctx.rt.arun("look it up", tools=[lookup_tool()], tool_execution="manual")
    return await first.acontinue_with(answers(ctx, first))


async def continue_stream(ctx: Ctx) -> Any:
    first = ctx.rt.run("look it up", tools=[lookup_tool()], tool_execution="manual")
    return list(first.continue_stream(answers(ctx, first)))


async def acontinue_stream(ctx: Ctx) -> Any:
    first = await ctx.rt.arun("look it up", tools=[lookup_tool()], tool_execution="manual")
    return [event async for event in first.acontinue_stream(answers(ctx, first))]


def handoff_turn(wire: Wire) -> list[Reply]:
    return [wire.tool_call_reply("transfer_to_specialist", {}, "call_h")]


async def handoff_(ctx: Ctx) -> Any:
    """The model hands off; the specialist's exec is the turn under test."""
    rt = ctx.rt

    @agentic_function
    def specialist(conversation: list[Message]) -> str:
        return str(rt.exec(conversation))

    def conversation(_: Any) -> list[Message]:
        if ctx.malformed:  # an assistant turn whose call id is not a string
            return [Message("user", ()), Message("assistant", (), (ToolCall(7, "x", {}),))]  # type: ignore[arg-type]
        return [Message("user", (TextBlock("hi"),))]

    to_specialist = handoff(specialist, input_filter=conversation)
    return rt.exec("help", tools=[to_specialist])


def mcp_turn(wire: Wire) -> list[Reply]:
    return [wire.tool_call_reply("add", {"a": 1, "b": 2}, "call_m")]


@pytest.fixture(scope="module")
def demo_mcp() -> Iterator[MCPServer]:
    """The demo MCP stdio server, started on first use and shared by the module's runs."""
    # Starting it imports the MCP SDK in a new process: far more than the default 5 s when
    # the machine is loaded (it failed so under xdist), so the start gets its own bound.
    server = MCPServer("demo", command=[sys.executable, str(DEMO)], timeout=20, connect_timeout=60)
    yield server
    server.close()


async def mcp(ctx: Ctx) -> Any:
    """A run with a real MCP stdio server's tools: the model calls one, then the turn under test.

    The tools are given listed (``list_tools()``), so the run does not adopt the
    server and close it: one process serves the whole module. Malformed: a
    server whose command is not a list of strings.
    """
    if ctx.malformed:
        return ctx.rt.run("add", tools=[MCPServer("demo", command=5)])
    tools = ctx.mcp.connect().list_tools()
    assert str(ctx.mcp.call_tool("add", {"a": 1, "b": 2})) == "3"  # the server does answer
    return ctx.rt.run("add", tools=tools)


async def cli_run(ctx: Ctx) -> Any:
    """``llmport run`` with the key in the environment and an llmport.toml for the loopback."""
    wire = ctx.wire
    FilePath("llmport.toml").write_text(wire.config_toml(ctx.server.url))
    retries = "-1" if ctx.malformed else "1"
    argv = ["run", "-m", wire.model, "--no-stream", "--retries", retries, "hi"]
    if ctx.rt.options.get("timeout") is not None:  # the case's runtime bound, as a flag
        argv[1:1] = ["--timeout", str(ctx.rt.options["timeout"])]
    with pytest.MonkeyPatch.context() as env:
        env.setenv("COLUMNS", "1000")  # one line stays one line
        for name, value in wire.env(ctx.creds).items():
            env.setenv(name, value)
        code, printed = cli(argv, ctx.capsys)
    if code != 0:
        raise CliExit(code, printed)
    return printed


#: Targets without embeddings: refused typed before any request (test_contract_embeddings).
NO_EMBED = {w.id: NO_EMBEDDINGS[w.id] for w in TARGETS if w.id in NO_EMBEDDINGS}
#: Targets whose credentials no environment variable holds (the CLI paths give keys there).
NO_ENV_KEY = {
    w.id: "Vertex AI takes Google credentials (Application Default Credentials: a "
    "service-account file or a gcloud login, whose tokens are minted over the network), "
    "not a key in an environment variable; the other paths give them in the settings"
    for w in TARGETS
    if w.id in ("anthropic-vertex", "gemini-vertex")
}


#: Targets without an image endpoint: refused typed before any request (test_contract_images).
NO_IMAGE = {w.id: NO_IMAGES[w.id] for w in TARGETS if w.id in NO_IMAGES}


def image_prompt(ctx: Ctx) -> Any:
    return BAD_CONTENT if ctx.malformed else "a fox"


async def generate_image_(ctx: Ctx) -> Any:
    return ctx.rt.generate_image(image_prompt(ctx), model=image_model(ctx.wire.id))


async def agenerate_image_(ctx: Ctx) -> Any:
    return await ctx.rt.agenerate_image(image_prompt(ctx), model=image_model(ctx.wire.id))


#: An image whose bytes contradict its declared media type (JPEG's magic declared PNG).
LYING_IMAGE = {"type": "image", "media_type": "image/png", "data": b"\xff\xd8\xff\xe0" + bytes(16)}


def embed_inputs(ctx: Ctx, *, media: bool = False) -> Any:
    """``["hi"]``; malformed: a number (``embed``) or, so that every target meets a media
    input on this table too, an image whose bytes contradict its type (``aembed``)."""
    if not ctx.malformed:
        return ["hi"]
    return [LYING_IMAGE] if media else BAD_CONTENT


async def embed_(ctx: Ctx) -> Any:
    return ctx.rt.embed(embed_inputs(ctx), model=embed_model(ctx.wire.id))


async def aembed_(ctx: Ctx) -> Any:
    return await ctx.rt.aembed(embed_inputs(ctx, media=True), model=embed_model(ctx.wire.id))


#: Targets whose embedding models here take no image (test_contract_embeddings checks
#: their typed refusal); the media path runs where one documents image embeddings.
NO_MEDIA_EMBED = {
    **NO_EMBED,
    **{
        w.id: "its embedding models here embed text only (an image is refused typed)"
        for w in TARGETS
        if w.id in EMBED_TARGETS and EMBED_TARGETS[w.id].media_model is None
    },
}


async def embed_image(ctx: Ctx) -> Any:
    """A caption fused with an image on the target's image-embedding model (malformed: an
    image whose bytes contradict its type)."""
    image = LYING_IMAGE if ctx.malformed else {"type": "image", "media_type": "image/png"}
    if not ctx.malformed:
        image["data"] = b"\x89PNG\r\n\x1a\n" + bytes(16)
    model = EMBED_TARGETS[ctx.wire.id].media_model
    return ctx.rt.embed([["a caption", image]], model=model)


async def cli_embed(ctx: Ctx) -> Any:
    """``llmport embed`` with the key in the environment (malformed: no input at all)."""
    wire = ctx.wire
    FilePath("llmport.toml").write_text(wire.config_toml(ctx.server.url))
    timeout = ctx.rt.options.get("timeout")  # the runtime's, as the command's flag
    argv = ["embed", "-m", embed_model(wire.id), "--retries", "1"]
    argv += [] if timeout is None else ["--timeout", str(timeout)]
    argv += [] if ctx.malformed else ["hi"]
    with pytest.MonkeyPatch.context() as env:
        env.setenv("COLUMNS", "1000")  # one line stays one line
        for name, value in wire.env(ctx.creds).items():
            env.setenv(name, value)
        code, printed = cli(argv, ctx.capsys)
    if code != 0:
        raise CliExit(code, printed)
    return printed


# --- the offline paths' checks ----------------------------------------------------------------


def every_key(fmt: str) -> Iterator[tuple[str, str]]:
    """Every target's and built-in profile's key of format ``fmt`` as environment variables."""
    for wire in TARGETS + PROFILE_TARGETS:
        yield from wire.env(wire.credentials(fmt)).items()


def every_secret(fmt: str) -> list[str]:
    return [s for wire in TARGETS + PROFILE_TARGETS for s in wire.secrets(wire.credentials(fmt))]


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """(exit status, stdout + stderr) of ``llmport ARGV``; argparse's exit is a status too."""
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out + err


def one_error_line(printed: str) -> str | None:
    """The typed error the CLI reported (``error: Name: ...``), or None."""
    lines = printed.strip().splitlines()
    if len(lines) != 1 or "Traceback" in printed:
        return None
    found = re.match(r"error: (\w+):", lines[0])
    return found.group(1) if found else None


def offline_cli(ok: list[str], failing: list[str], bad: list[str], bad_status: int = 2) -> Any:
    """A local CLI command's check: ``ok`` succeeds, ``failing`` is one typed error line, ``bad``
    (malformed arguments) is refused with ``bad_status``; no key anywhere in what it printed."""

    async def check(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
        leaks = PartialLeakCheck(every_secret(fmt))
        with pytest.MonkeyPatch.context() as env:
            env.setenv("COLUMNS", "1000")
            for name, value in every_key(fmt):
                env.setenv(name, value)
            code, printed = cli(ok, capsys)
            leaks.text(f"I6 `llmport {' '.join(ok)}`", printed)
            assert code == 0, f"`llmport {' '.join(ok)}` failed: {leaks.mask(printed)[:400]}"
            if failing:
                code, printed = cli(failing, capsys)
                leaks.text(f"I6 `llmport {' '.join(failing)}`", printed)
                name = one_error_line(printed)
                assert code == 1 and name is not None, f"I1: {leaks.mask(printed)[:400]}"
                assert issubclass(getattr(errors, name, object), LlmportError), f"I1: {name}"
            code, printed = cli(bad, capsys)
            leaks.text(f"I6 `llmport {' '.join(bad)}`", printed)
            assert code == bad_status, f"I2: `llmport {' '.join(bad)}` exit {code}: {printed!r}"
        leaks.assert_clean()

    return check


async def model_info_offline(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``model_info`` answers from the plugin's tables: no request; a bad name is typed."""
    for wire in TARGETS:
        creds = wire.credentials(fmt)
        leaks = PartialLeakCheck(wire.secrets(creds))
        with LoopbackServer([]) as server:
            rt = make_runtime(wire, server, creds=creds, max_retries=1)
            try:
                info = rt.model_info()
                leaks.text(f"I6 {wire.id} repr(model_info())", repr(info))
                with pytest.raises(InputError):
                    rt.model_info(BAD_CONTENT)  # type: ignore[arg-type]
            finally:
                rt.close()
            assert server.requests == [], f"{wire.id}: model_info reached the vendor"
        leaks.assert_clean()


async def mcp_serve_offline(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``llmport mcp serve``: a served tool failing with a foreign exception quoting the key
    reaches the client as an error result (masked); an unknown toolset is a typed error."""
    wire = TARGETS[0]
    (secret,) = wire.secrets(wire.credentials(fmt))
    leaks = PartialLeakCheck.echoed([secret], ECHO_KINDS)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("OPENAI_API_KEY", secret)
        texts, flags = await serve_calls(LeakyToolset(0, None), ["reveal", "explode"])
        code, printed = cli(["mcp", "serve", "no-such-toolset"], capsys)
    for i, text in enumerate(texts):
        leaks.text(f"I6 mcp serve CallToolResult content[{i}]", text)
    leaks.text("I6 `llmport mcp serve no-such-toolset`", printed)
    leaks.assert_clean()
    assert flags == [False, True], f"I1: the failing tool's result is not an error: {texts}"
    assert "PermissionError" in texts[1] and "***" in texts[1], texts
    assert code == 1 and one_error_line(printed) == "UnknownToolError", f"I2: {printed!r}"


# --- the table ---------------------------------------------------------------------------------


def results_turn(wire: Wire) -> list[Reply]:
    return [ended_job(wire)]  # the job has ended: its results are read next


def cancel_turn(wire: Wire) -> list[Reply]:
    # Gemini's and Bedrock's cancel answer an empty object: the status read after it is next.
    return [Reply(json={})] if wire.id in ("gemini", "bedrock") else []


def submit_turn(wire: Wire) -> list[Reply]:
    # Bedrock puts the requests in S3 first (an empty 200): the job creation is next.
    return [Reply(body=b"")] if wire.id == "bedrock" else []


# --- files by reference ---------------------------------------------------------

#: The file every upload path sends (malformed: a number, not a file).
PDF_BLOCK = {"type": "file", "data": b"%PDF-1.4\n%%EOF\n", "media_type": "application/pdf"}
#: Vendors with no files API refuse every files path typed before any request
#: (test_contract_files.py checks that, with zero requests).
NO_FILES = {
    "bedrock": "no files API: S3 references only, files paths refused before any request",
    "anthropic-vertex": "no Files API on Vertex AI: refused before any request",
    "gemini-vertex": "no Files API on Vertex AI (gs:// URIs only): refused before any request",
    "callonly": "a _call plugin has no files API: refused before any request",
    "callonly-stream": "a _call plugin has no files API: refused before any request",
}
#: Where an empty object is the documented success answer.
EMPTY_OK = {
    **NO_FILES,
    "gemini": "files.delete and files.list answer {} when done / when there are no files",
}


def upload_source(ctx: Ctx) -> Any:
    return BAD_CONTENT if ctx.malformed else PDF_BLOCK


def a_ref(ctx: Ctx) -> Any:
    """A reference of the target's files account (malformed: a bare id string)."""
    vendor = "openai" if ctx.wire.provider.startswith("openai") else ctx.wire.provider
    return "file-1" if ctx.malformed else llmport.FileRef(vendor, "file-1", "application/pdf")


async def upload(ctx: Ctx) -> Any:
    return ctx.rt.upload(upload_source(ctx), provider=ctx.wire.provider)


async def aupload(ctx: Ctx) -> Any:
    return await ctx.rt.aupload(upload_source(ctx), provider=ctx.wire.provider)


async def delete_file(ctx: Ctx) -> Any:
    return ctx.rt.delete_file(a_ref(ctx))


async def adelete_file(ctx: Ctx) -> Any:
    return await ctx.rt.adelete_file(a_ref(ctx))


def files_of(ctx: Ctx) -> Any:
    return BAD_CONTENT if ctx.malformed else ctx.wire.provider


async def files(ctx: Ctx) -> Any:
    return ctx.rt.files(provider=files_of(ctx))


async def afiles(ctx: Ctx) -> Any:
    return await ctx.rt.afiles(provider=files_of(ctx))


#: THE table: every path of the public API. A new path must be added here to pass the suite.
@agentic_function
def shaky(task: str) -> str:
    """Answer ``task`` (the function fix() is asked to repair)."""
    return task


def fix_kwargs(ctx: Ctx) -> dict[str, Any]:
    """fix()'s arguments: a refused repair, or (I2) an instruction that is not text."""
    instruction = 123 if ctx.malformed else "answer in French"
    return {
        "runtime": ctx.rt,
        "instruction": instruction,
        "error": RuntimeError("wrong language"),
        "approve": lambda diff: False,
    }


async def durable_(ctx: Ctx) -> Any:
    return durable_run(ctx.rt, content(ctx))


async def adurable_(ctx: Ctx) -> Any:
    return await adurable_run(ctx.rt, content(ctx))


async def fix_(ctx: Ctx) -> Any:
    return fix(shaky, **fix_kwargs(ctx))


async def async_fix_(ctx: Ctx) -> Any:
    return await async_fix(shaky, **fix_kwargs(ctx))


PATHS: list[Path] = [
    Path("exec", ("Runtime.exec",), exec_),
    Path("async_exec", ("Runtime.async_exec",), async_exec),
    Path("run", ("Runtime.run",), run),
    Path("arun", ("Runtime.arun",), arun),
    Path("stream", ("Runtime.stream",), stream),
    Path("astream", ("Runtime.astream",), astream),
    Path("count_tokens", ("Runtime.count_tokens",), count_tokens, not_for=NO_COUNT),
    Path("acount_tokens", ("Runtime.acount_tokens",), acount_tokens, not_for=NO_COUNT),
    Path("batch", ("Runtime.batch",), batch, before=submit_turn, not_for=NO_BATCH),
    Path("abatch", ("Runtime.abatch",), abatch, before=submit_turn, not_for=NO_BATCH),
    Path("status", ("Runtime.batch_job", "BatchJob.status"), status, not_for=NO_BATCH),
    Path("astatus", ("BatchJob.astatus",), astatus, not_for=NO_BATCH),
    Path("wait", ("BatchJob.wait",), wait, not_for=NO_BATCH),
    Path("wait_async", ("BatchJob.wait_async",), wait_async, not_for=NO_BATCH),
    Path("results", ("BatchJob.results",), results, before=results_turn, not_for=NO_BATCH),
    Path("aresults", ("BatchJob.aresults",), aresults, before=results_turn, not_for=NO_BATCH),
    Path("cancel", ("BatchJob.cancel",), cancel, before=cancel_turn, not_for=NO_BATCH),
    Path("acancel", ("BatchJob.acancel",), acancel, before=cancel_turn, not_for=NO_BATCH),
    Path("upload", ("Runtime.upload",), upload, not_for=NO_FILES),
    Path("aupload", ("Runtime.aupload",), aupload, not_for=NO_FILES),
    Path("delete_file", ("Runtime.delete_file",), delete_file, not_for=EMPTY_OK),
    Path("adelete_file", ("Runtime.adelete_file",), adelete_file, not_for=EMPTY_OK),
    Path("files", ("Runtime.files",), files, not_for=EMPTY_OK),
    Path("afiles", ("Runtime.afiles",), afiles, not_for=EMPTY_OK),
    Path(
        "create_conversation",
        ("Runtime.create_conversation",),
        create_conversation,
        not_for=NO_CONVERSATIONS,
    ),
    Path(
        "acreate_conversation",
        ("Runtime.acreate_conversation",),
        acreate_conversation,
        not_for=NO_CONVERSATIONS,
    ),
    Path(
        "delete_conversation",
        ("Runtime.delete_conversation",),
        delete_conversation,
        not_for=NO_CONVERSATIONS,
    ),
    Path(
        "adelete_conversation",
        ("Runtime.adelete_conversation",),
        adelete_conversation,
        not_for=NO_CONVERSATIONS,
    ),
    Path("submit", ("Runtime.submit",), submit, not_for=NO_BACKGROUND),
    Path("asubmit", ("Runtime.asubmit",), asubmit, not_for=NO_BACKGROUND),
    Path(
        "bg status",
        ("Runtime.background_job", "BackgroundJob.status"),
        bg_status,
        not_for=NO_BACKGROUND,
    ),
    Path("bg astatus", ("BackgroundJob.astatus",), bg_astatus, not_for=NO_BACKGROUND),
    Path("bg wait", ("BackgroundJob.wait",), bg_wait, not_for=NO_BACKGROUND),
    Path("bg wait_async", ("BackgroundJob.wait_async",), bg_wait_async, not_for=NO_BACKGROUND),
    Path("bg result", ("BackgroundJob.result",), bg_result, not_for=NO_BACKGROUND),
    Path("bg aresult", ("BackgroundJob.aresult",), bg_aresult, not_for=NO_BACKGROUND),
    Path("bg cancel", ("BackgroundJob.cancel",), bg_cancel, not_for=NO_BACKGROUND),
    Path("bg acancel", ("BackgroundJob.acancel",), bg_acancel, not_for=NO_BACKGROUND),
    Path("bg stream", ("BackgroundJob.stream",), bg_stream, not_for=NO_BACKGROUND),
    Path("bg astream", ("BackgroundJob.astream",), bg_astream, not_for=NO_BACKGROUND),
    Path("continue_with", ("RunResult.continue_with",), continue_with, before=tool_turn),
    Path("acontinue_with", ("RunResult.acontinue_with",), acontinue_with, before=tool_turn),
    Path("continue_stream", ("RunResult.continue_stream",), continue_stream, before=tool_turn),
    Path("acontinue_stream", ("RunResult.acontinue_stream",), acontinue_stream, before=tool_turn),
    Path("handoff", ("llmport.handoff",), handoff_, before=handoff_turn),
    Path("fix", ("llmport.fix",), fix_),
    Path("async_fix", ("llmport.async_fix",), async_fix_),
    Path("durable run", ("llmport_dbos.durable",), durable_),
    Path("async durable run", ("llmport_dbos.durable:async",), adurable_),
    Path(
        "MCP",
        ("MCPServer.connect", "MCPServer.list_tools", "MCPServer.call_tool", "mcp:toolset"),
        mcp,
        before=mcp_turn,
    ),
    Path("cli run", ("cli run",), cli_run, not_for=NO_ENV_KEY),
    Path("embed", ("Runtime.embed",), embed_, not_for=NO_EMBED),
    Path("aembed", ("Runtime.aembed",), aembed_, not_for=NO_EMBED),
    Path("embed image", ("Runtime.embed",), embed_image, not_for=NO_MEDIA_EMBED),
    Path("cli embed", ("cli embed",), cli_embed, not_for={**NO_EMBED, **NO_ENV_KEY}),
    Path("generate_image", ("Runtime.generate_image",), generate_image_, not_for=NO_IMAGE),
    Path("agenerate_image", ("Runtime.agenerate_image",), agenerate_image_, not_for=NO_IMAGE),
    Path("model_info", ("Runtime.model_info",), offline=model_info_offline),
    Path("mcp serve", ("cli mcp serve", "llmport_mcp.serve"), offline=mcp_serve_offline),
    Path(
        "cli models",
        ("cli models",),
        offline=offline_cli(
            ["models", "--json"], ["models", "--provider", "nope"], ["models", "--bogus"]
        ),
    ),
    Path(
        "cli plugins",
        ("cli plugins",),
        offline=offline_cli(["plugins"], [], ["plugins", "--bogus"]),
    ),
    Path("cli demo", ("cli demo",), offline=offline_cli(["demo"], [], ["demo", "extra"])),
    Path(
        "cli session show",
        ("cli session show",),
        offline=offline_cli(
            ["session", "show", "--help"],
            ["session", "show", "missing.sqlite"],
            ["session", "show"],
        ),
    ),
    Path(
        "cli chat",
        ("cli chat",),
        offline=offline_cli(["chat", "--help"], ["chat", "--cid", "nope"], ["chat", "extra"]),
    ),
    Path(
        "cli logs",
        ("cli logs",),
        offline=offline_cli(["logs", "--path"], ["logs", "--cid", "nope"], ["logs", "-n", "0"]),
    ),
    Path(
        "cli keys",
        ("cli keys set", "cli keys list", "cli keys path"),
        offline=offline_cli(["keys", "list"], ["keys", "set", "no good"], ["keys", "set"]),
    ),
    Path(
        "cli aliases",
        ("cli aliases set", "cli aliases list", "cli aliases remove"),
        offline=offline_cli(
            ["aliases", "list"], ["aliases", "remove", "nope"], ["aliases", "set", "x"]
        ),
    ),
    Path(
        "cli models default",
        ("cli models default",),
        offline=offline_cli(["models", "default"], [], ["models", "default", "a", "b"]),
    ),
    Path(
        "cli session list",
        ("cli session list",),
        offline=offline_cli(
            ["session", "list", "--help"],
            ["session", "list", "missing.sqlite"],
            ["session", "list", "a", "b"],
        ),
    ),
    Path(
        "cli cassette show",
        ("cli cassette show",),
        offline=offline_cli(
            ["cassette", "show", "--help"],
            ["cassette", "show", "missing.yaml"],
            ["cassette", "show"],
        ),
    ),
]


# --- the checks -------------------------------------------------------------------------------


async def outcome(path: Path, ctx: Ctx) -> BaseException | None:
    """The exception ``path`` raised on ``ctx`` (None: it returned)."""
    assert path.drive is not None
    try:
        await path.drive(ctx)
    except Exception as exc:  # what was raised is the subject of the checks
        return exc
    return None


def typed(err: BaseException | None, expected: type[LlmportError]) -> str | None:
    """What is wrong with ``err`` as the typed error ``expected`` (None: nothing)."""
    if err is None:
        return f"no error: the call succeeded (expected {expected.__name__})"
    if isinstance(err, CliExit):
        # One line: "error: Name: ..." (an ExecFailed names each attempt's error after it).
        line = err.printed.strip() if one_error_line(err.printed) else ""
        named = [
            getattr(errors, n, None) for n in re.findall(r"(?:^error|Attempt \d+): (\w+):", line)
        ]
        if err.code != 1 or not any(isinstance(k, type) and issubclass(k, expected) for k in named):
            return f"the CLI did not print one 'error: ...{expected.__name__}...' line: {err}"
        return None
    if not isinstance(err, LlmportError):
        return f"a raw {type(err).__module__}.{type(err).__name__}: {err}"
    if not any(isinstance(e, expected) for e in attempt_errors(err)):
        kinds = [type(e).__name__ for e in attempt_errors(err)]
        return f"expected {expected.__name__}, got {kinds}: {err}"
    return None


class Script:
    """The vendor's replies, set turn by turn: the one reply of a loopback server (repeat)."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests = 0

    def play(self, replies: list[Reply]) -> None:
        self.replies, self.requests = deque(replies), 0

    def answer(self, request: RecordedRequest) -> Reply:
        self.requests += 1
        if not self.replies:
            return Reply(status=599, json={"error": {"message": "loopback script exhausted"}})
        reply = self.replies.popleft()
        return reply.handler(request) if reply.handler is not None else reply


def chain_problems(label: str, err: BaseException | None, leaks: PartialLeakCheck) -> list[str]:
    """I1: the foreign exceptions behind ``err``; I6: the error's channels go to ``leaks``."""
    if isinstance(err, CliExit):
        leaks.text(f"{label} CLI output", err.printed)
        return []
    if err is None:
        return []
    leaks.error(label, err)
    leaks.exec_failed(label, err)
    return [f"{label}: foreign {leaks.mask(f)[:200]}" for f in foreign_exceptions(err)]


async def one_format(
    path: Path, ctx: Ctx, script: Script, caplog: pytest.LogCaptureFixture
) -> list[str]:
    """The three turns of a vendor path for the key format of ``ctx``; the problems found."""
    wire, fmt = ctx.wire, ctx.fmt
    secrets = wire.secrets(ctx.creds)
    leaks = PartialLeakCheck.echoed(secrets, ECHO_KINDS)
    before = path.before(wire)
    problems: list[str] = []

    # I2: malformed input; no request but those of the turns before it.
    script.play(before)
    ctx.malformed = True
    err = await outcome(path, ctx)
    ctx.malformed = False
    if (wrong := typed(err, InputError)) is not None:
        problems.append(f"I2 {fmt}: {leaks.mask(wrong)[:300]}")
    if script.requests > len(before):
        problems.append(f"I2 {fmt}: {script.requests - len(before)} request(s) reached the vendor")

    # I1 + I6: a 401 quoting the key whole and in parts, and the auth headers.
    caplog.clear()
    quoted = [echo(s, kind) for s in secrets for kind in ECHO_KINDS]
    script.play([*before, key_echo_reply(wire, 401, quoted)])
    err = await outcome(path, ctx)
    if (wrong := typed(err, AuthenticationError)) is not None:
        problems.append(f"I1 {fmt} 401: {leaks.mask(wrong)[:300]}")
    problems += chain_problems(f"I1/I6 {fmt} 401", err, leaks)
    leaks.logs(f"I6 {fmt} 401", caplog)

    # I1: a 200 that is not the documented success shape.
    script.play([*before, Reply(json={})])
    err = await outcome(path, ctx)
    if (wrong := typed(err, MalformedResponseError)) is not None:
        problems.append(f"I1 {fmt} 200 {{}}: {leaks.mask(wrong)[:300]}")
    problems += chain_problems(f"I1/I6 {fmt} 200 {{}}", err, leaks)
    try:
        leaks.assert_clean()
    except AssertionError as leak:
        problems.append(f"I6 {fmt}: {leak}")
    return problems


#: The paths the built-in profiles (``wire.PROFILE_TARGETS``) run, one sync and one async:
#: their wire is that of the compatible services in TARGETS, which run every path; what is
#: a profile's own (key variable and shape, base URL, error body) is on these two.
PROFILE_PATHS = ("run", "astream")
VENDOR_CASES = [
    pytest.param(path, wire, id=f"{path.name}-{wire.id}")
    for path in PATHS
    if path.drive is not None
    for wire in TARGETS
    if wire.id not in path.not_for
] + [
    pytest.param(path, wire, id=f"{path.name}-{wire.id}")
    for path in PATHS
    if path.name in PROFILE_PATHS
    for wire in PROFILE_TARGETS
]
OFFLINE_CASES = [
    pytest.param(path, fmt, id=f"{path.name}-{fmt}")
    for path in PATHS
    if path.offline is not None
    for fmt in KEY_FORMATS
]


@pytest.mark.parametrize(("path", "wire"), VENDOR_CASES)
async def test_i1_i2_i6_on_a_vendor_path(
    path: Path,
    wire: Wire,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    demo_mcp: MCPServer,
) -> None:
    problems: list[str] = []
    script = Script()
    # One server and one runtime per key format for the six turns: the file stays fast.
    with LoopbackServer([Reply(handler=script.answer)], repeat=True) as server:
        for fmt in KEY_FORMATS:
            if fmt == "custom":
                # "standard" runs at the default log levels, "custom" at DEBUG: a vendor
                # SDK logging at DEBUG may take its own way to the vendor (the Anthropic
                # plugin's direct post steps aside), so both ways meet I1 and I6 here.
                debug_logging(caplog)
            creds = wire.credentials(fmt)
            settings = batch_settings(wire, server)
            rt = make_runtime(wire, server, creds=creds, max_retries=1, settings=settings)
            try:
                ctx = Ctx(wire, rt, server, fmt, creds, capsys, demo_mcp)
                problems += await one_format(path, ctx, script, caplog)
            finally:
                rt.close()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("path", "fmt"), OFFLINE_CASES)
async def test_i1_i2_i6_on_a_path_off_the_vendor(
    path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert path.offline is not None
    await path.offline(fmt, capsys)


def test_every_path_is_driven_or_checked_once() -> None:
    names = [p.name for p in PATHS]
    assert len(names) == len(set(names)), "a path is in the table twice"
    for path in PATHS:
        assert (path.drive is None) != (path.offline is None), f"{path.name}: drive xor offline"
        assert set(path.not_for) <= {w.id for w in TARGETS}, f"{path.name}: unknown target"


# --- the table is structural: the public API, listed from the code ------------------------------

#: Public names that are not paths (they reach no vendor and take no caller input
#: the invariants speak of), each with the reason.
NOT_A_PATH: dict[str, str] = {
    "Runtime.close": "lifecycle: releases clients and adopted resources",
    "Runtime.aclose": "lifecycle: releases clients and adopted resources",
    "Runtime.adopt": "lifecycle: registers a resource to close with the runtime",
    "Runtime.add_usage": "bookkeeping: adds a Usage to the runtime's total",
    "Runtime.gate": "the rate-limit gate of a target (no request)",
    "llmport.agentic_function": "a decorator: its calls reach vendors through Runtime paths",
    "llmport.tool": "a decorator building a Tool (its schema checks: the inputs boundary tests)",
    "llmport.compute_reads": "reads a session DAG, no request",
    "llmport.render_dag_messages": "renders DAG nodes as messages, no request",
    "Runtime.route": "routing: a model string to its provider, no request (UnknownModelError)",
    "Runtime.resolve": "routing: a model string to its provider, no request (UnknownModelError)",
    "Runtime.routed": "routing: whether a model was routed before (a lookup, no request)",
    "Runtime.call_provider": "the runtime's call= provider object (no request)",
    "Runtime.store_for": "the key-value store of a session (local)",
    "Runtime.snapshot": "the runtime's settings for planning the next call, read now (local)",
    "RunResult.tool_message": "builds the tool turn continue_* send (checked through them)",
    "MCPServer.add": "registers a local function as a tool of the toolset (no request)",
    "MCPServer.aconnect": "async connect: the same handshake as connect (the MCP path)",
    "MCPServer.acall_tool": "async call_tool: the same session as call_tool (the MCP path)",
    "MCPServer.close": "lifecycle: stops the server process",
    "MCPServer.aclose": "lifecycle: stops the server process",
    "llmport_mcp.plugin.llmport_toolsets": "registers [mcp.servers] toolsets (the MCP path)",
    "llmport_mcp.plugin.llmport_register_commands": "adds `mcp serve` (the mcp serve path)",
    "llmport_mcp.plugin.server_from_config": "builds an MCPServer from settings (the MCP path)",
    "llmport_mcp.plugin.cmd_serve": "the `mcp serve` command (the mcp serve path)",
}


def public_methods(cls: type) -> list[str]:
    """``Class.method`` for every public method ``cls`` has (not properties), inherited
    ones included (a job's shared shape: ``BatchJob.wait`` is ``Job.wait``)."""
    return sorted(
        {
            f"{cls.__name__}.{name}"
            for klass in cls.__mro__
            if klass.__module__.startswith(("llmport.", "llmport_"))
            for name, value in vars(klass).items()
            if not name.startswith("_") and inspect.isfunction(value)
        }
    )


def cli_commands(parser: argparse.ArgumentParser, prefix: str = "cli") -> list[str]:
    """Every leaf subcommand of ``parser``, as ``cli run``, ``cli session show``..."""
    found: list[str] = []
    for action in parser._actions:  # argparse's own registry of actions
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += cli_commands(sub, f"{prefix} {name}") or [f"{prefix} {name}"]
    return found


def public_api() -> set[str]:
    from llmport_mcp import plugin as mcp_plugin
    from llmport_mcp.server import MCPServer as Server

    hooks = [
        f"llmport_mcp.plugin.{name}"
        for name, value in vars(mcp_plugin).items()
        if inspect.isfunction(value)
        and not name.startswith("_")
        and value.__module__ == mcp_plugin.__name__
    ]
    return {
        *public_methods(Runtime),
        *public_methods(RunResult),
        *public_methods(BatchJob),
        *public_methods(BackgroundJob),
        *public_methods(Server),
        *cli_commands(build_parser()),
        *hooks,
        *public_functions(),
    }


def public_functions() -> list[str]:
    """The functions ``llmport`` exports (``fix``, ``handoff``...): a new one needs a row."""
    return [
        f"llmport.{name}"
        for name in llmport.__all__
        if inspect.isfunction(getattr(llmport, name)) and name[0].islower()
    ]


def test_every_public_path_is_in_the_table() -> None:
    covered = {name for path in PATHS for name in path.api}
    missing = sorted(public_api() - covered - set(NOT_A_PATH))
    assert not missing, (
        "public paths in neither PATHS nor NOT_A_PATH (add a row to PATHS, or an "
        f"exclusion with its reason): {missing}"
    )
    stale = sorted(set(NOT_A_PATH) - public_api())
    assert not stale, f"NOT_A_PATH names what the API no longer has: {stale}"
