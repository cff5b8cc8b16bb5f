"""``fix()`` and ``async_fix()``: the model rewrites an agentic function, installed once approved.

    try:
        observe("the login button")
    except ExecFailed:
        observe = fix(observe, runtime=rt, instruction="answer with JSON, not prose",
                      approve=lambda diff: input(diff + "\\nInstall? ") == "y")

The flow is one step machine (:func:`_steps`) run by a sync and an async
driver, which differ only in how they call the model and the approver:

1. the model gets the function's source (decorator included), its
   docstring, the failure (the exception with its attempt report, the
   function's recent calls from the session DAG) and the instruction, and
   answers through structured output (:class:`~llmport.repair.prompt.Proposal`);
2. the proposal is checked on its syntax tree (:mod:`llmport.repair.checks`);
   a refused one gets one repair round, then :class:`~llmport.errors.FixRejected`;
3. a unified diff is built and shown to ``approve(diff)`` or, without it,
   to the ``llmport_approve_fix`` hook; anything but ``True`` raises
   :class:`~llmport.errors.FixNotApproved` with the diff;
4. only then is the new source compiled and run (its ``def`` executed in a
   copy of the function's module globals, plus the values its closure
   held), which re-applies its ``@agentic_function`` decorator; with
   ``write=True`` the function's lines in its file are replaced.

Whatever the outcome, a session in reach (``session=``, the running
agentic call's, the ``with session:`` block's, the function's own) gets a
``fix`` node: function, instruction, model, diff, rationale, who approved.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import os
import sys
import textwrap
import time
from collections.abc import Awaitable, Callable, Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import FixNotApproved, FixRejected, OptionError
from ..messages.types import Usage
from ..sessions.agentic import AgenticFrame, AgenticSpec, current_session, error_info
from ..sessions.dag import Node, Status, current_frame
from ..slotted import dataclass
from ..tools.tool import run_coroutine_blocking
from .checks import check_proposal
from .hidden import shown
from .prompt import (
    RECENT_CALLS,
    SYSTEM,
    Proposal,
    describe_failure,
    describe_nodes,
    fix_prompt,
    repair_prompt,
)
from .source_file import SourceFile, with_newline

if TYPE_CHECKING:
    from ..runtime import RunResult, Runtime
    from ..sessions.session import Session

__all__ = ["async_fix", "fix"]

F = TypeVar("F", bound=Callable[..., Any])
Approver = Callable[[str], "bool | Awaitable[bool]"]


class _Current:
    """The default of ``error=``: the exception being handled where ``fix()`` is called."""

    def __repr__(self) -> str:
        return "<the exception being handled>"


CURRENT_EXCEPTION: Any = _Current()

#: The attribute a fixed function (not written to a file) keeps its source in,
#: so it can be fixed again (``inspect`` cannot read it from a file).
SOURCE_ATTRIBUTE = "__llmport_source__"


# --- the function being repaired --------------------------------------------------------


@dataclass(slots=True)
class Original:
    """Where an agentic function's source is: the text around it and its lines in it.

    ``lines`` is the whole file when the source came from one (else just
    the function's lines), ``\n``-ended; ``start``/``end`` delimit the
    function in it (decorators included), ``indent`` is what its ``def``
    line is indented by and ``source`` its dedented text. ``file`` is the
    file as read (its bytes, encoding, line endings), or None with
    ``unwritable`` saying why it cannot be written back.
    """

    fn: Callable[..., Any]
    func: Callable[..., Any]
    spec: AgenticSpec
    source: str
    lines: list[str]
    start: int
    end: int
    indent: str
    file: SourceFile | None
    unwritable: str = "it has none"

    @property
    def path(self) -> Path | None:
        return self.file.path if self.file is not None else None

    @classmethod
    def of(cls, fn: Callable[..., Any]) -> Original:
        spec = getattr(fn, "__agentic__", None)
        if not isinstance(spec, AgenticSpec):
            raise OptionError(f"fix() repairs @agentic_function functions; {fn!r} is not one")
        func = inspect.unwrap(fn)
        kept = getattr(fn, SOURCE_ATTRIBUTE, None)
        if isinstance(kept, str):  # fixed before and not written: its source is kept here
            lines = kept.splitlines(keepends=True)
            return cls(fn, func, spec, kept, lines, 0, len(lines), "", None)
        try:
            block, first = inspect.getsourcelines(func)
            filename = inspect.getsourcefile(func)
        except (OSError, TypeError) as exc:
            raise OptionError(f"fix() cannot read the source of {spec.qualname}(): {exc}") from exc
        text = "".join(block)
        indent = text[: len(text) - len(text.lstrip(" \t"))]
        source = textwrap.dedent(text)
        start = max(first - 1, 0)
        file, unwritable = _source_file(filename)
        lines = file.normalized() if file is not None else []
        if lines[start : start + len(block)] != block:
            file, unwritable = None, unwritable or "the file changed since the function was loaded"
            lines, start = block, 0
        end = start + len(block)
        return cls(fn, func, spec, source, lines, start, end, indent, file, unwritable)

    def new_lines(self, source: str) -> list[str]:
        """The lines with the function's replaced by ``source``, indented like the original."""
        block = textwrap.indent(source if source.endswith("\n") else source + "\n", self.indent)
        before, after = self.lines[: self.start], self.lines[self.end :]
        return [*before, *block.splitlines(keepends=True), *after]

    def written(self, source: str) -> bytes:
        """The file's new bytes: its own line endings and encoding (OptionError if it cannot)."""
        assert self.file is not None
        lines = self.new_lines(source)
        before, after = self.file.lines[: self.start], self.file.lines[self.end :]
        block = with_newline(lines[self.start : len(lines) - len(after)], self.file.newline)
        return self.file.encoded([*before, *block, *after])

    def diff(self, source: str) -> str:
        """A unified diff of the function's file (or source) before and after.

        Every character a terminal would not show as itself is escaped
        (:func:`~llmport.repair.hidden.shown`): the approver sees all there is.
        """
        name = _shown_path(self.path) if self.path is not None else f"{self.spec.qualname}()"
        lines = difflib.unified_diff(self.lines, self.new_lines(source), f"a/{name}", f"b/{name}")
        return shown("".join(lines))

    def recent_calls(self, session: Session | None) -> list[Node]:
        """The function's latest recorded calls in ``session``, oldest first."""
        if session is None:
            return []
        calls: list[Node] = []
        for node in reversed(session.nodes()):
            same = node.kind == "function" and node.name == self.spec.name
            if same and node.data.get("qualname") == self.spec.qualname:
                calls.append(node)
                if len(calls) == RECENT_CALLS:
                    break
        return calls[::-1]


def _source_file(filename: str | None) -> tuple[SourceFile | None, str]:
    """The function's file as read, or None and why it cannot be rewritten."""
    if not filename or not os.path.lexists(filename):
        return None, "it has none"
    try:
        return SourceFile.read(Path(filename)), ""
    except OptionError as exc:
        return None, str(exc)


def _shown_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return path.name


def _unfenced(source: str) -> str:
    """``source`` without the Markdown code fence a model may wrap it in, dedented."""
    text = source.strip("\n")
    # Not splitlines(): it breaks at \r, \f and the Unicode separators, which the
    # checks must see as they are (a hidden line break is refused, not repaired).
    lines = text.split("\n")
    if len(lines) >= 2 and lines[0].lstrip().startswith("```") and lines[-1].strip() == "```":
        text = "\n".join(lines[1:-1])
    return textwrap.dedent(text).strip("\n") + "\n"


# --- the step machine -------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Ask:
    """Effect: run the model with ``content`` after ``history`` (structured: a Proposal)."""

    content: str
    history: list[Any] | None = None


@dataclass(slots=True, frozen=True)
class Approve:
    """Effect: ask the approver about ``diff``; the answer is ``(approved, by)``."""

    diff: str


@dataclass(slots=True)
class Job:
    """One fix: its inputs, and what the fix node records as it goes."""

    original: Original
    runtime: Runtime
    instruction: str
    approve: Approver | None
    allow_imports: tuple[str, ...]
    write: bool
    error: BaseException | None
    session: Session | None
    model: str | None
    #: The function's latest calls in ``session`` (shown to the model; the last is fixed).
    calls: list[Node] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)
    #: Tokens the proposals cost (recorded on the fix node).
    usage: Usage = field(default_factory=Usage)


@dataclass(slots=True, frozen=True)
class Installed:
    """The end of the machine: the approved function, compiled."""

    fn: Callable[..., Any]


Effect = Ask | Approve | Installed


def _next(steps: Generator[Ask | Approve, Any, Callable[..., Any]], answer: Any) -> Effect:
    """Send the last effect's answer; the next effect, or :class:`Installed` at the end."""
    try:
        return steps.send(answer)
    except StopIteration as done:
        return Installed(done.value)


def _steps(job: Job) -> Generator[Ask | Approve, Any, Callable[..., Any]]:
    """The fix, as effects: ask, check (one repair round), approve, then install."""
    original = job.original
    prompt = fix_prompt(
        source=original.source,
        doc=original.spec.doc,
        failure=describe_failure(job.error),
        calls=describe_nodes(job.calls),
        instruction=job.instruction,
    )
    result: RunResult[Proposal] = yield Ask(prompt)
    source, reason = _review(job, result)
    if reason is not None:
        result = yield Ask(repair_prompt(reason), list(result.messages))
        source, reason = _review(job, result)
        if reason is not None:
            raise FixRejected(reason, source=source)
    diff = original.diff(source)
    job.record["diff"] = diff
    approved, by = yield Approve(diff)
    if by is not None:
        job.record["approved_by" if approved else "refused_by"] = by
    if not approved:
        reason = "refused" if by is not None else "not approved: no approve= and no hook answered"
        raise FixNotApproved(diff, rationale=job.record.get("rationale", ""), reason=reason)
    return _install(job, source)


def _review(job: Job, result: RunResult[Proposal]) -> tuple[str, str | None]:
    """The proposal's source and why it is refused (None: it passed the checks)."""
    proposal = result.value
    job.usage.add(result.usage)
    job.record["model"] = result.model
    job.record["rationale"] = proposal.rationale
    source = _unfenced(proposal.source)
    original = job.original
    nested = job.write and bool(original.indent)  # written back inside a class or function
    reason = check_proposal(
        original.source, source, allow_imports=job.allow_imports, nested=nested
    )
    return source, reason


def _install(job: Job, source: str) -> Callable[..., Any]:
    """Compile and run the approved ``def``; write the file if asked. Returns the new function."""
    original = job.original
    tree = ast.parse(source)
    written = job.write and original.path is not None
    if written:  # tracebacks point at the function's lines in its (rewritten) file
        ast.increment_lineno(tree, original.start)
    filename = str(original.path) if written else f"<llmport fix of {original.spec.qualname}>"
    data = b""
    if written:  # refuse before anything runs if the file moved under us or cannot hold it
        assert original.file is not None
        original.file.check_unchanged()
        data = original.written(source)
    namespace = _namespace(original.func)
    exec(compile(tree, filename, "exec"), namespace)  # approved code, in its own namespace
    new = namespace.get(original.spec.name)
    if not isinstance(getattr(new, "__agentic__", None), AgenticSpec):
        raise FixRejected("the decorator did not make an agentic function", source=source)
    assert new is not None
    if written:
        assert original.file is not None
        original.file.write(data)
        job.record["written"] = _shown_path(original.file.path)
    else:
        setattr(new, SOURCE_ATTRIBUTE, source)
    return new  # type: ignore[no-any-return]


def _namespace(func: Callable[..., Any]) -> dict[str, Any]:
    """A copy of ``func``'s module globals plus the values its closure held."""
    namespace = dict(getattr(func, "__globals__", {}))
    code = getattr(func, "__code__", None)
    for name, cell in zip(code.co_freevars if code else (), func.__closure__ or (), strict=False):
        try:
            namespace[name] = cell.cell_contents
        except ValueError:  # a cell not filled yet
            continue
    return namespace


# --- the drivers -------------------------------------------------------------------------


def _run_params(job: Job) -> dict[str, Any]:
    params: dict[str, Any] = {"response_format": Proposal, "system": SYSTEM}
    if job.model is not None:
        params["model"] = job.model
    return params


def _hook_answer(job: Job, diff: str) -> tuple[bool, str | None]:
    """The ``llmport_approve_fix`` hook's answer: ``(approved, by)``; by None: no answer."""
    hook = job.runtime.plugins.hook.llmport_approve_fix
    answer = hook(diff=diff, fn=job.original.fn, instruction=job.instruction)
    return (answer is True, None if answer is None else "llmport_approve_fix hook")


def _approver_name(approve: Approver) -> str:
    return f"approve={getattr(approve, '__qualname__', type(approve).__name__)}"


def _perform(job: Job, effect: Ask | Approve) -> Any:
    if isinstance(effect, Ask):
        return job.runtime.run(effect.content, history=effect.history, **_run_params(job))
    if job.approve is None:
        return _hook_answer(job, effect.diff)
    answer = job.approve(effect.diff)
    if inspect.isawaitable(answer):
        answer = run_coroutine_blocking(answer)
    return (answer is True, _approver_name(job.approve))


async def _aperform(job: Job, effect: Ask | Approve) -> Any:
    if isinstance(effect, Ask):
        return await job.runtime.arun(effect.content, history=effect.history, **_run_params(job))
    if job.approve is None:
        return _hook_answer(job, effect.diff)
    answer = job.approve(effect.diff)
    if inspect.isawaitable(answer):
        answer = await answer
    return (answer is True, _approver_name(job.approve))


def _job(
    fn: Callable[..., Any],
    runtime: Runtime,
    instruction: str,
    approve: Approver | None,
    allow_imports: Iterable[str],
    write: bool,
    error: Any,
    session: Session | None,
    model: str | None,
) -> Job:
    if not isinstance(instruction, str) or not instruction.strip():
        raise OptionError("fix() needs an instruction: what is wrong and what to do about it")
    if approve is not None and not callable(approve):
        raise OptionError(f"approve must be a callable approve(diff) -> bool, got {approve!r}")
    if isinstance(allow_imports, str):
        raise OptionError("allow_imports takes a list of module names, not one string")
    original = Original.of(fn)
    if write and original.file is None:
        raise OptionError(
            f"write=True needs the source file of {original.spec.qualname}(): "
            f"{original.unwritable}"
        )
    if error is CURRENT_EXCEPTION:
        error = sys.exc_info()[1]
    found = session if session is not None else current_session()
    if found is None:
        found = original.spec.session
    return Job(
        original,
        runtime,
        instruction,
        approve,
        tuple(allow_imports),
        write,
        error,
        found,
        model,
        original.recent_calls(found),
    )


@contextmanager
def _recorded(job: Job) -> Iterator[None]:
    """Record the fix node when the block ends, however it ends."""
    started = time.perf_counter()
    try:
        yield
    except BaseException as exc:
        _record(job, started, exc)
        raise
    _record(job, started, None)


def _record(job: Job, started: float, failure: BaseException | None) -> None:
    """Append the ``fix`` node (when a session is in reach) with what the fix came to."""
    session = job.session
    if session is None:
        return
    spec = job.original.spec
    frame = current_frame()  # inside an agentic call of this session: under its node
    in_call = isinstance(frame, AgenticFrame) and frame.session is session
    parent = frame.node if isinstance(frame, AgenticFrame) and in_call else session.root
    calls = job.calls
    data = {
        "function": spec.qualname,
        "module": spec.module,
        "fixes": calls[-1].id if calls else None,
        "instruction": job.instruction,
        "model": job.record.get("model") or job.model or job.runtime.model,
        "allow_imports": list(job.allow_imports),
    }
    outcome = {k: v for k, v in job.record.items() if k != "model"}
    outcome["usage"] = job.usage.to_dict()
    if failure is not None:
        outcome["error"] = error_info(failure)
    status: Status = "error" if failure is not None else "ok"
    session.record("fix", spec.name, parent, data, status, outcome, time.perf_counter() - started)


def fix(
    fn: F,
    *,
    runtime: Runtime,
    instruction: str,
    approve: Callable[[str], bool] | None = None,
    allow_imports: Iterable[str] = (),
    write: bool = False,
    error: BaseException | None = CURRENT_EXCEPTION,
    session: Session | None = None,
    model: str | None = None,
) -> F:
    """Have the model repair an ``@agentic_function``; return the new function once approved.

    * ``runtime`` asks the model (its retries, limits, budget and structured
      output repair apply), with ``model`` if given.
    * ``instruction``: what is wrong and what to change.
    * ``approve(diff) -> bool``: shown the unified diff; only ``True``
      installs. Without it the ``llmport_approve_fix`` hook decides; with
      no answer from either, :class:`~llmport.errors.FixNotApproved`.
    * ``allow_imports``: modules the new source may import beyond those the
      original imports (``["json"]``; submodules included).
    * ``write=True``: also replace the function's lines in its source file.
    * ``error``: the failure to show the model; default the exception being
      handled where ``fix()`` is called (inside ``except``), if any.
    * ``session``: where to find the function's recent calls and record the
      ``fix`` node; default the current one, else the function's own.

    A proposal that fails a check (it does not parse; another name or
    signature; not an ``@agentic_function``; an import not allowed; other
    top-level statements) gets one repair round, then
    :class:`~llmport.errors.FixRejected`. The proposed code never runs
    before approval. The returned function is a fresh ``@agentic_function``;
    the original is left as it was (rebind the name: ``fn = fix(fn, ...)``).
    """
    job = _job(fn, runtime, instruction, approve, allow_imports, write, error, session, model)
    with _recorded(job):
        steps = _steps(job)
        effect = _next(steps, None)
        while not isinstance(effect, Installed):
            effect = _next(steps, _perform(job, effect))
        return effect.fn  # type: ignore[return-value]


async def async_fix(
    fn: F,
    *,
    runtime: Runtime,
    instruction: str,
    approve: Callable[[str], bool | Awaitable[bool]] | None = None,
    allow_imports: Iterable[str] = (),
    write: bool = False,
    error: BaseException | None = CURRENT_EXCEPTION,
    session: Session | None = None,
    model: str | None = None,
) -> F:
    """Async :func:`fix`: same parameters; ``approve`` may be async."""
    job = _job(fn, runtime, instruction, approve, allow_imports, write, error, session, model)
    with _recorded(job):
        steps = _steps(job)
        effect = _next(steps, None)
        while not isinstance(effect, Installed):
            effect = _next(steps, await _aperform(job, effect))
        return effect.fn  # type: ignore[return-value]
