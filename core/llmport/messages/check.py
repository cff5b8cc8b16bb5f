"""The input boundary: the checks every door for content calls, before any request.

Content reaches a request by many doors: ``content``, ``history=``, Message
lists, :meth:`Message.from_dict <llmport.messages.types.Message.from_dict>`,
tool constructors, ``continue_with`` values, handoff input and batch
requests. Each of them ends in the functions here, so a malformed item is
the same typed :class:`~llmport.errors.InputError` whatever door it came
in by, raised before any request and never a raw ``TypeError`` or
``RecursionError``:

* :func:`check_message` and :func:`check_turns`: the fields of one turn and
  the shape of a conversation (only assistant turns carry tool calls; every
  tool result answers a call made before it);
* :func:`media_problem`: bytes that contradict their declared media type;
* :func:`nesting_problem`: a JSON value nested deeper than :data:`MAX_DEPTH`
  (checked iteratively: the check itself cannot overflow the stack);
* :func:`check_tool_parameters`: a tool's JSON schema is an object schema
  whose local ``$ref`` s all resolve;
* :func:`check_input_size`: the new turn fits the model's window, and a
  request for a model whose window is unknown stays under
  :data:`UNKNOWN_WINDOW_TOKENS`.

This module imports no other llmport module but the errors and the token
estimate's rule (:mod:`llmport.messages.scripts`, which imports none): the neutral
types (:mod:`llmport.messages.types`) and the content loader
(:mod:`llmport.messages.content`) both call it. Turns and blocks are read by
their attributes (see :class:`Turn`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from ..errors import ContextWindowExceeded, MessageError, SchemaError
from ..patterns import pattern
from .scripts import text_quarters, tokens_of

__all__ = [
    "MAX_DEPTH",
    "ROLES",
    "UNKNOWN_WINDOW_TOKENS",
    "Turn",
    "canonical_media_type",
    "check_file_refs",
    "check_input_size",
    "check_message",
    "check_tool_parameters",
    "check_turns",
    "file_ref_problem",
    "media_problem",
    "nesting_problem",
    "role_problem",
    "sniff_media_type",
]

#: How deep a JSON value (tool arguments, a tool schema, vendor data) may nest.
#: Far beyond any real schema or argument object; deep enough nesting would
#: otherwise overflow the stack of every recursive encoder on the way out.
MAX_DEPTH = 100

#: The input a request may carry, in estimated tokens (:mod:`llmport.messages.estimate`),
#: when the model's context window is unknown (a ``call=`` function, a
#: self-hosted model): the largest window any model offers (10 million
#: tokens). Above it the request is refused with
#: :class:`~llmport.errors.ContextWindowExceeded` instead of being sent.
UNKNOWN_WINDOW_TOKENS = 10_000_000

ROLES = ("system", "user", "assistant", "tool")


class Turn(Protocol):
    """What the checks read of a :class:`~llmport.messages.types.Message`."""

    @property
    def role(self) -> Any: ...
    @property
    def blocks(self) -> Sequence[Any]: ...
    @property
    def tool_calls(self) -> Sequence[Any]: ...
    @property
    def tool_results(self) -> Sequence[Any]: ...


# --- nesting ------------------------------------------------------------------


def nesting_problem(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """What is wrong with how deep ``value`` nests (JSON objects and arrays), or None.

    Iterative, so a value nested 100,000 deep is reported, not a RecursionError.
    """
    if not isinstance(value, _CONTAINERS) and not isinstance(value, Mapping):
        return None
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth >= limit:
            return f"nested more than {limit} levels deep"
        for child in item if isinstance(item, (list, tuple)) else item.values():
            if isinstance(child, _CONTAINERS):
                stack.append((child, depth + 1))
    return None


#: What a JSON value nests in (a custom Mapping counts at the top level only).
_CONTAINERS = (dict, list, tuple)


# --- media bytes ----------------------------------------------------------------

# Aliases vendors and users write for the same thing.
_CANONICAL = {
    "image/jpg": "image/jpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/mp3": "audio/mpeg",
    "application/x-yaml": "application/yaml",
    "text/x-markdown": "text/markdown",
}

# Types whose files always carry a signature sniff_media_type knows: bytes
# said to be one of these that show no signature are not that type.
_SIGNED_TYPES = frozenset(
    {
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "audio/wav",
        "audio/flac",
        "audio/ogg",
        "application/pdf",
    }
)


def canonical_media_type(media_type: str) -> str:
    """``"image/JPG; q=1"`` -> ``"image/jpeg"``: lower case, no parameters, one name per type."""
    mt = media_type.split(";", 1)[0].strip().lower()
    return _CANONICAL.get(mt, mt)


def sniff_media_type(data: bytes) -> str | None:
    """The media type told by magic bytes, or None."""
    head = data[:16]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"RIFF") and data[8:12] == b"WAVE":
        return "audio/wav"
    if b"%PDF-" in data[:1024]:  # readers allow leading junk before the header
        return "application/pdf"
    if head.startswith(b"ID3") or head[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return "audio/mpeg"
    if head.startswith(b"OggS"):
        return "audio/ogg"
    if head.startswith(b"fLaC"):
        return "audio/flac"
    if data[4:8] == b"ftyp" and data[8:12] in (b"M4A ", b"M4B "):
        return "audio/mp4"
    if head.startswith(b"PK\x03\x04"):
        return "application/zip"
    return None


def _compatible(media_type: str, sniffed: str) -> bool:
    # Office documents are zip archives.
    if sniffed == "application/zip":
        return media_type.startswith("application/vnd.openxmlformats") or media_type.endswith("zip")
    return media_type == sniffed


def media_problem(media_type: str, data: bytes, sniffed: str | None) -> str | None:
    """How ``data`` (whose magic bytes say ``sniffed``) contradicts ``media_type``, or None."""
    if sniffed is not None and not _compatible(media_type, sniffed):
        return f"the bytes are {sniffed}"
    if sniffed is None and media_type in _SIGNED_TYPES:
        return f"the bytes are not {media_type}"
    return None


# --- one turn ---------------------------------------------------------------------


def check_message(message: Turn, where: str = "message") -> None:
    """Raise :class:`MessageError` unless every field of ``message`` has its type.

    For turns built by hand as well as read by ``Message.from_dict``: text is
    a string, a tool call has string ``id`` and ``name`` and an object of
    arguments (bounded nesting), a tool result answers a string ``call_id``
    with string content. Cheap when all is well (a long history is checked
    on every call): error messages are built only for a failure.
    """
    role = message.role
    if role not in ROLES:
        raise MessageError(f"{where}: role must be one of {list(ROLES)}, got {role!r}")
    for part, check in _PARTS:
        items = getattr(message, part)
        if not isinstance(items, (list, tuple)):
            raise MessageError(
                f"{where} ({role}) {part} must be a list, got {type(items).__name__}"
            )
        for i, item in enumerate(items):
            problem = check(item)
            if problem is not None:
                raise MessageError(f"{where} ({role}) {part}[{i}]: {problem}")


def _not_string(value: Any, name: str, empty: bool = True) -> str | None:
    if isinstance(value, str) and (empty or value):
        return None
    return f"{name} must be {'a' if empty else 'a non-empty'} string, got {value!r:.60}"


def _block_problem(block: Any) -> str | None:
    kind = getattr(block, "type", None)
    if kind == "text":
        text = getattr(block, "text", None)
        return None if type(text) is str else _not_string(text, "text")
    if kind == "thinking":
        return _thinking_problem(block)
    if kind in ("image", "audio", "file"):
        return _not_string(getattr(block, "media_type", None), "media_type", empty=False) or (
            _index_problem(getattr(block, "index", 0))
        )
    if kind in ("server_tool_call", "server_tool_result"):
        return nesting_problem(getattr(block, "raw", None))
    if kind == "file_ref":
        return next(
            (
                problem
                for name in ("provider", "id", "media_type")
                if (problem := _not_string(getattr(block, name, None), name, empty=False))
            ),
            None,
        )
    return f"not a content block: {type(block).__name__}"


def _thinking_problem(block: Any) -> str | None:
    """A thinking block's text is a string; its signature and redacted data strings or null
    (the vendor gets them back verbatim: anything else is a 400 after the request was paid)."""
    text = getattr(block, "text", None)
    if type(text) is not str:
        return _not_string(text, "text")
    for name in ("signature", "redacted"):
        value = getattr(block, name, None)
        if value is not None and not isinstance(value, str):
            return f"{name} must be a string or null, got {type(value).__name__}"
    return None


def _index_problem(index: Any) -> str | None:
    """A media block's ``index`` (its position in the content it came in) is an integer >= 0."""
    if type(index) is not int or index < 0:
        return f"index must be an integer >= 0, got {index!r:.60}"
    return None


def _call_problem(call: Any) -> str | None:
    problem = _not_string(getattr(call, "id", None), "id", empty=False) or _not_string(
        getattr(call, "name", None), "name", empty=False
    )
    if problem is not None:
        return problem
    arguments = getattr(call, "arguments", None)
    if not isinstance(arguments, dict) and not isinstance(arguments, Mapping):
        return f"arguments must be an object, got {type(arguments).__name__}"
    problem = nesting_problem(arguments)
    if problem is not None:
        return f"arguments are {problem}"
    position = getattr(call, "position", None)
    if position is not None and (type(position) is not int or position < 0):
        return f"position must be a block count (an integer >= 0) or null, got {position!r:.60}"
    return _not_string(getattr(call, "raw_arguments", ""), "raw_arguments")


def _result_problem(result: Any) -> str | None:
    problem = (
        _not_string(getattr(result, "call_id", None), "call_id", empty=False)
        or _not_string(getattr(result, "name", None), "name")
        or _not_string(getattr(result, "content", None), "content")
    )
    if problem is not None:
        return problem
    if not isinstance(getattr(result, "is_error", False), bool):
        return "is_error must be true or false"
    blocks = getattr(result, "blocks", ())
    if not isinstance(blocks, (list, tuple)):
        return f"blocks must be a list, got {type(blocks).__name__}"
    return next((p for p in map(_block_problem, blocks) if p is not None), None)


_PARTS: tuple[tuple[str, Callable[[Any], str | None]], ...] = (
    ("blocks", _block_problem),
    ("tool_calls", _call_problem),
    ("tool_results", _result_problem),
)


# --- files by reference ------------------------------------------------------------


#: The longest file id a reference holds: an S3 URI (a 63-character bucket, a 1,024-byte
#: key) is the longest any vendor gives; a 1 MB "id" is no reference.
MAX_FILE_ID = 2048
#: ``type/subtype`` (RFC 6838 names), parameters not allowed in a reference.
_MEDIA_TYPE = pattern(
    r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"
)
#: Control characters: a newline in an id would reach a URL path or a header.
_CONTROL = pattern(r"[\x00-\x1f\x7f]")


def file_ref_problem(
    provider: Any, file_id: Any, media_type: Any, size: Any, filename: Any
) -> str | None:
    """What is wrong with the fields of a :class:`~llmport.messages.types.FileRef`, or None.

    A reference may come from a stored or forged dict (``Message.from_dict``,
    a content dict): its id is sent in a URL or a body, so it must be a
    non-empty string of at most :data:`MAX_FILE_ID` characters without control
    characters, and its media type a ``type/subtype``.
    """
    for name, value in (("provider", provider), ("id", file_id)):
        if not isinstance(value, str) or not value:
            return f"{name!r} must be a non-empty string"
        if _CONTROL.search(value):
            return f"{name!r} holds a control character"
    if len(file_id) > MAX_FILE_ID:
        return f"'id' is {len(file_id):,} characters long (at most {MAX_FILE_ID:,})"
    if not isinstance(media_type, str) or not _MEDIA_TYPE.match(media_type):
        return f"'media_type' must be a media type such as 'application/pdf', got {media_type!r}"
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        return f"'size' must be None or an integer >= 0, got {size!r}"
    if filename is not None and (not isinstance(filename, str) or _CONTROL.search(filename)):
        return "'filename' must be None or a string without control characters"
    return None


def check_file_refs(messages: Iterable[Turn], vendor: str, model: str = "") -> None:
    """Refuse a file reference another vendor holds, before any request.

    An uploaded file (:class:`~llmport.messages.types.FileRef`) lives in one
    vendor's files account: any other vendor would answer 400 (or, worse,
    another file of that id). ``vendor`` is the files account of the provider
    the request goes to (``Provider.files_vendor``). Tool results' blocks are
    checked too.
    """
    for i, message in enumerate(messages):
        blocks = [*message.blocks, *(b for r in message.tool_results for b in r.blocks)]
        for block in blocks:
            if getattr(block, "type", None) == "file_ref" and block.provider != vendor:
                raise MessageError(
                    f"messages[{i}]: {block.describe()} was uploaded to {block.provider!r} "
                    f"and cannot be read by {vendor!r}"
                    + (f" ({model})" if model else "")
                    + f"; upload the file with rt.upload(..., provider={vendor!r})"
                )


# --- a conversation ---------------------------------------------------------------


def check_turns(messages: Iterable[Turn], where: str = "history") -> None:
    """Check every turn and the conversation's shape; raise :class:`MessageError`.

    Only assistant turns carry tool calls (a user turn with tool calls would
    otherwise be dropped by every vendor) and only tool turns carry tool
    results (:func:`role_problem`); every tool result answers a call of an
    earlier assistant turn, and every call is answered before the next user
    or assistant turn (vendors refuse an orphan result, and a call left
    without its result, with a 400 after the request was paid for).
    """
    called: set[str] = set()
    unanswered: dict[str, str] = {}  # call id -> tool name, of calls still waiting for results
    i = -1
    for i, message in enumerate(messages):
        problem = _shape_problem(message, called) or _unanswered_problem(message, unanswered)
        if problem is not None:
            raise MessageError(f"{where}[{i}]: {problem}")
        for result in message.tool_results:
            unanswered.pop(result.call_id, None)
        if message.tool_calls:
            called.update(call.id for call in message.tool_calls)
            unanswered.update((call.id, call.name) for call in message.tool_calls)
    if unanswered:  # the request would end on calls nobody answered
        raise MessageError(f"{where}[{i}]: {_unanswered(unanswered, 'the conversation ends')}")


def role_problem(message: Turn) -> str | None:
    """What is wrong with the parts ``message`` carries for its role, or None.

    Tool calls belong to assistant turns and tool results to tool turns: that
    is where llmport's own turns put them (``RunResult.messages``,
    ``Message.to_dict``), and each plugin converts from there.
    """
    role = message.role
    if message.tool_calls and role != "assistant":
        return f"a {role} turn carries tool calls; only assistant turns do"
    if message.tool_results and role != "tool":
        return f"a {role} turn carries tool results; they go in a tool turn"
    return None


def _shape_problem(message: Turn, called: set[str]) -> str | None:
    """What is wrong with ``message`` after the calls ``called`` so far, or None."""
    try:
        check_message(message, "")
    except MessageError as exc:
        return str(exc).lstrip(": ")
    problem = role_problem(message)
    if problem is not None:
        return problem
    for result in message.tool_results:
        if result.call_id not in called:
            return (
                f"the tool result for {result.call_id!r} answers no earlier "
                "assistant tool call (keep the assistant turn that made the call)"
            )
    return None


def _unanswered_problem(message: Turn, unanswered: Mapping[str, str]) -> str | None:
    """A user or assistant turn while calls still wait for their results, or None."""
    if message.role not in ("user", "assistant") or not unanswered:
        return None
    return _unanswered(unanswered, f"a {message.role} turn follows")


def _unanswered(unanswered: Mapping[str, str], what: str) -> str:
    calls = ", ".join(f"{name} ({call_id!r})" for call_id, name in unanswered.items())
    return (
        f"{what} tool calls with no result: {calls}; give each call its result "
        "in a tool turn first (RunResult.continue_with does)"
    )


# --- size ---------------------------------------------------------------------------


def _quarters(messages: Iterable[Turn]) -> int:
    """The estimate of the turns' text, in quarter tokens (the one rule of the estimate)."""
    total = 0
    for message in messages:
        for block in message.blocks:
            text = getattr(block, "text", None)
            if isinstance(text, str):
                total += text_quarters(text)
        for result in message.tool_results:
            total += text_quarters(result.content)
    return total


def check_input_size(
    history: Sequence[Turn],
    turn: Turn | None,
    window: int | None,
    model: str = "",
) -> None:
    """Refuse input that cannot fit, before any request: a cheap estimate (text only).

    With a known ``window``, the new ``turn`` alone must fit: a context policy
    may drop history, never the current turn (the whole request is checked
    where it is built). With an unknown window, history and turn together
    must stay under :data:`UNKNOWN_WINDOW_TOKENS`. Text is estimated as every
    estimate is (:func:`~llmport.messages.estimate.text_quarters`).
    """
    limit = window if window is not None else UNKNOWN_WINDOW_TOKENS
    measured = [turn] if turn is not None else []
    if window is None:
        measured = [*history, *measured]
    tokens = tokens_of(_quarters(measured))
    if tokens > limit:
        raise ContextWindowExceeded(tokens, limit, model)


# --- tool schemas ---------------------------------------------------------------------


def check_tool_parameters(parameters: Any, where: str = "tool parameters") -> None:
    """Raise :class:`SchemaError` unless ``parameters`` is an object schema whose refs resolve.

    Vendors take only ``{"type": "object", ...}`` as a tool's parameters, and
    refuse (or silently misread) a ``$ref`` that points nowhere. The JSON
    Schema meta-check itself is :func:`llmport.schema.build.check_schema`.
    """
    if not isinstance(parameters, Mapping):
        raise SchemaError(f"{where} must be a JSON schema object, got {type(parameters).__name__}")
    problem = nesting_problem(parameters)
    if problem:
        raise SchemaError(f"{where}: the schema is {problem}")
    if parameters.get("type") != "object":
        raise SchemaError(
            f"{where} must be an object schema ({{'type': 'object', 'properties': ...}}), "
            f"got type {parameters.get('type')!r}"
        )
    for ref in _refs(parameters):
        if not isinstance(ref, str) or not _resolves(parameters, ref):
            raise SchemaError(f"{where}: $ref {ref!r} points to nothing in the schema")


def _refs(schema: Mapping[str, Any]) -> Iterator[Any]:
    stack: list[Any] = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if "$ref" in item:
                yield item["$ref"]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _resolves(schema: Mapping[str, Any], ref: str) -> bool:
    """Whether a local ``#/...`` JSON pointer finds something in ``schema``."""
    if ref == "#":
        return True
    if not ref.startswith("#/"):
        return False  # a remote or anchor reference: nothing a vendor can resolve
    node: Any = schema
    for raw in ref[2:].split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return False
    return True
