"""Neutral :class:`~llmport.messages.types.Request` -> the OpenAI wire body and SDK arguments.

Two target shapes: Chat Completions (:func:`build_chat_request`) and Responses
(:func:`build_responses_request`). Both take the model's capabilities and either
convert every block and option or raise a typed input error; nothing is
dropped. They run once per model request (``Provider.prepare``); the
result is split into the ``openai`` SDK's arguments by :func:`sdk_kwargs`.
The conversion rules (also in docs/providers/openai.md):

* images: a ``data:`` URL of the cached base64, or the caller's URL;
* audio (Chat only, audio models): ``input_audio`` with format wav/mp3;
* PDF: a ``file`` / ``input_file`` part with base64 ``file_data``;
* other text-like files: inlined by :func:`llmport.messages.content.inline_text_file`;
* anything else: :class:`~llmport.errors.UnsupportedContentError`;
* ``vendor={"openai": {...}}`` fields are merged into the body last
  (:func:`merge_vendor_fields`: dicts recursively, other values replaced,
  ``tools`` entries added beside the function tools), a tool's ``vendor``
  fields into its entry (Chat: into its ``function`` object).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from llmport.controls.options import STANDARD_OPTIONS
from llmport.errors import OptionError, UnsupportedContentError, UnsupportedFeatureError
from llmport.messages.content import inline_text_file, is_text_like
from llmport.messages.order import in_order
from llmport.messages.types import (
    Block,
    CacheControl,
    FileRef,
    MediaBlock,
    Message,
    ModelCapabilities,
    NativeTool,
    Request,
    ResponseFormat,
    ServerToolCall,
    ServerToolResult,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
)
from llmport.provider.tool_media import move_answer_media, move_tool_media
from llmport.provider.wire import base64_of, data_url_of, plain
from llmport.schema.transform import has_optional, strict_schema

from .models import AUDIO_FORMATS, efforts_for, explicit_cache, reasoning_family

#: OpenAI request fields modelled as options, beyond the standard ones: each has
#: the same meaning in both APIs (``verbosity`` moves to ``text.verbosity`` in
#: Responses) and its value is checked before any request. ``extra_headers``
#: are per-call HTTP headers (the SDK's argument), not a body field.
OPENAI_OPTIONS = frozenset(
    {
        "service_tier",
        "metadata",
        "store",
        "prompt_cache_key",
        "prompt_cache_retention",
        "safety_identifier",
        "verbosity",
        "extra_headers",
    }
)
#: Every option name this plugin accepts; anything else is an ``OptionError``
#: (fields llmport does not model go through ``vendor={"openai": {...}}``).
KNOWN_OPTIONS = STANDARD_OPTIONS | OPENAI_OPTIONS
#: Options that become SDK call arguments rather than body fields.
CALL_OPTIONS = ("timeout", "extra_headers")
#: Allowed values of the enumerated options (OpenAI's API reference).
CHOICES: dict[str, tuple[str, ...]] = {
    "service_tier": ("auto", "default", "flex", "scale", "priority"),
    "prompt_cache_retention": ("in-memory", "24h"),
    "verbosity": ("low", "medium", "high"),
}
#: Where Response.extra / Message.extra keep the ids of a Responses answer's
#: message items (only when reasoning items came with them): a reasoning item
#: is echoed with the message item that followed it, id included.
MESSAGE_IDS = "openai_message_ids"
#: The only lifetime OpenAI's explicit cache breakpoints take.
EXPLICIT_TTL = "30m"
BREAKPOINT = {"mode": "explicit"}
#: Body fields ``vendor=`` may not set: llmport sends them from the call itself.
VENDOR_RESERVED = {
    "chat": ("model", "messages", "stream"),
    "responses": ("model", "input", "stream"),
}


# ---------------------------------------------------------------------------
# Chat Completions
# ---------------------------------------------------------------------------


def build_chat_request(
    request: Request,
    vendor: str,
    caps: ModelCapabilities,
    *,
    fields: Mapping[str, Any] | None = None,
    keys: tuple[str, ...] = ("openai",),
    max_tokens_field: str = "max_completion_tokens",
    assistant: Assistant | None = None,
    acknowledge_media: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(body, call)``: the Chat Completions JSON body (without ``stream``) and SDK arguments.

    ``fields`` are the request's vendor fields, merged last; ``keys`` name
    the ``vendor`` entries of a tool that apply to this provider;
    ``assistant`` converts an assistant turn (an OpenAI-compatible service's
    own, which may carry its reasoning back: :mod:`llmport_openai.compat`);
    ``acknowledge_media``: an assistant ``"OK"`` goes between a tool turn and
    the user turn carrying its media (:func:`~llmport.provider.tool_media.move_tool_media`).
    """
    model = request.model
    bp = explicit_cache(model)
    messages = chat_messages(
        request, vendor, caps, bp, assistant or chat_assistant, acknowledge_media
    )
    body: dict[str, Any] = {"model": model, "messages": messages}
    if request.tools:
        body["tools"] = [chat_tool(spec, vendor, model, keys) for spec in request.tools]
        body["tool_choice"] = chat_tool_choice(request.tool_choice)
        body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.response_format is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": json_schema_format(request.response_format, vendor, model),
        }
    if request.reasoning is not None:
        effort = reasoning_effort(request, vendor, api="chat")
        if effort is not None:
            body["reasoning_effort"] = effort
    if request.native_tools:
        body.update(chat_native_tools(request.native_tools, vendor, model))
    options, call = split_options(request.options, vendor, model, api="chat")
    if "max_tokens" in options:
        options[max_tokens_field] = options.pop("max_tokens")
    body.update(options)
    if request.cache is not None or bp:
        cache_fields(body, request, vendor, bp, api="chat")
    if fields:
        check_body_fields(fields, vendor, api="chat")
        merge_vendor_fields(body, fields)
    return body, call


#: Converts one assistant turn: ``assistant(message, vendor, model) -> message dict``.
Assistant = Callable[[Message, str, str], dict[str, Any]]


def chat_messages(
    request: Request,
    vendor: str,
    caps: ModelCapabilities,
    bp: bool = False,
    assistant: Assistant | None = None,
    acknowledge_media: bool = False,
) -> list[dict[str, Any]]:
    """The ``messages`` list: system prompt, turns, tool calls and results.

    ``bp``: the model takes explicit cache breakpoints (marked blocks carry one).
    A tool message holds text only, so media a tool returned follow it in a
    user message (:func:`~llmport.provider.tool_media.move_tool_media`).
    """
    out: list[dict[str, Any]] = []
    model = request.model
    if request.system:
        if system_as_parts(request, bp):
            parts = [chat_part(b, vendor, model, caps, bp) for b in request.system_blocks]
            out.append({"role": "system", "content": parts})
        else:
            out.append({"role": "system", "content": request.system})
    # Source: OpenAI API reference, "Create chat completion": a tool message's content is text (a
    #   string or text parts); media go in the next user message (as recorded: wire-samples
    #   openai-chat/tool-result-image). An assistant message holds text too: the media of an
    #   earlier answer (another vendor's image) go the same way.
    moved = move_tool_media(request.messages, acknowledge=acknowledge_media)
    for message in move_answer_media(moved):
        # Results answer the previous assistant turn, so they come first.
        for result in message.tool_results:
            out.append({"role": "tool", "tool_call_id": result.call_id, "content": result.content})
        if message.role == "assistant":
            out.append((assistant or chat_assistant)(message, vendor, model))
        elif message.blocks:
            role = "system" if message.role == "system" else "user"
            out.append(
                {"role": role, "content": chat_content(message.blocks, vendor, model, caps, bp)}
            )
    return out


def chat_content(
    blocks: tuple[Block, ...], vendor: str, model: str, caps: ModelCapabilities, bp: bool = False
) -> str | list[dict[str, Any]]:
    """A lone text block stays a string (as OpenAI's own examples send it)."""
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock) and not (bp and blocks[0].cache):
        return blocks[0].text
    return [chat_part(block, vendor, model, caps, bp) for block in blocks]


def chat_part(
    block: Block, vendor: str, model: str, caps: ModelCapabilities, bp: bool = False
) -> dict[str, Any]:
    part = _chat_part(block, vendor, model, caps)
    if bp:
        mark_breakpoint(part, block, vendor, model)
    return part


def _chat_part(block: Block, vendor: str, model: str, caps: ModelCapabilities) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, FileRef):
        return chat_file_ref(block, vendor, model)
    if not isinstance(block, MediaBlock):
        raise UnsupportedContentError(
            vendor, model, describe(block), "a user turn takes text, images, audio and files"
        )
    if block.citations:
        raise document_citations(vendor, model)
    kind = media_kind(block, caps)
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": block.url or data_url_of(block)}}
    # Source: OpenAI API reference, "Create a model response": input content is input_text,
    #   input_image, input_file (no audio).
    if kind == "audio":
        fmt = AUDIO_FORMATS.get(block.media_type)
        # Source: OpenAI API reference, "Create chat completion": input_audio format wav or mp3,
        #   on audio models (the capability table).
        if fmt is None or "audio" not in caps.input_modalities:
            raise UnsupportedContentError(
                vendor,
                model,
                block.describe(),
                "Chat Completions takes audio only as wav or mp3, and only on audio models "
                "(e.g. gpt-4o-audio-preview)",
            )
        _need_inline(block, vendor, model)
        return {"type": "input_audio", "input_audio": {"data": base64_of(block), "format": fmt}}
    if kind == "native_file":
        _need_inline(block, vendor, model)
        return {
            "type": "file",
            "file": {"filename": file_name(block), "file_data": data_url_of(block)},
        }
    return {"type": "text", "text": inline_file(block, kind, vendor, model).text}


def chat_file_ref(ref: FileRef, vendor: str, model: str) -> dict[str, Any]:
    """An uploaded file as a Chat Completions ``file`` part (``file.file_id``).

    Images are refused: Chat's ``image_url.url`` takes "either a URL of the
    image or the base64 encoded image data" (API reference), no file id.
    """
    if ref.media_type.startswith("image/"):
        raise UnsupportedContentError(
            vendor,
            model,
            ref.describe(),
            "Chat Completions takes images by URL or base64 only; use 'openai-responses:' "
            "(input_image takes a file_id)",
        )
    return {"type": "file", "file": {"file_id": ref.id}}


# Source: OpenAI API reference, "Create chat completion": an assistant message holds text (or a
#   refusal) and tool_calls.
def chat_assistant(message: Message, vendor: str, model: str) -> dict[str, Any]:
    for block in message.blocks:
        if not isinstance(block, TextBlock):
            raise UnsupportedContentError(
                vendor,
                model,
                describe(block),
                "a Chat Completions assistant turn holds text and tool calls only",
            )
    out: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call_arguments(call)},
            }
            for call in message.tool_calls
        ]
    elif out["content"] is None:
        out["content"] = ""
    return out


def chat_tool(
    spec: ToolSpec, vendor: str, model: str, keys: tuple[str, ...] = ("openai",)
) -> dict[str, Any]:
    """A function tool entry; its ``vendor`` fields merge into ``function`` (where they live)."""
    function: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "parameters": tool_parameters(spec, vendor, model),
    }
    if spec.strict:
        function["strict"] = True
    merge_fields(function, tool_fields(spec, keys))
    return {"type": "function", "function": function}


def chat_tool_choice(choice: ToolChoice) -> Any:
    if isinstance(choice, Mapping):
        return {"type": "function", "function": {"name": choice["name"]}}
    return choice


# ---------------------------------------------------------------------------
# Responses
# ---------------------------------------------------------------------------


def build_responses_request(
    request: Request,
    vendor: str,
    caps: ModelCapabilities,
    *,
    fields: Mapping[str, Any] | None = None,
    keys: tuple[str, ...] = ("openai", "openai-responses"),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(body, call)``: the Responses JSON body (without ``stream``) and SDK arguments."""
    model = request.model
    bp = explicit_cache(model)
    stored = stored_on_openai(request, fields)
    inputs = responses_input(request, vendor, caps, bp, stored=stored)
    body: dict[str, Any] = {"model": model, "input": inputs}
    if request.system and not system_as_parts(request, bp):
        body["instructions"] = request.system
    include: list[str] = []
    if reasoning_family(model):
        # Without previous_response_id= / conversation= the whole conversation is sent:
        # reasoning items can only be echoed with their encrypted content.
        include.append("reasoning.encrypted_content")
    if request.reasoning is not None:
        reasoning = responses_reasoning(request, vendor)
        if reasoning:
            body["reasoning"] = reasoning
            if not include and reasoning.get("effort") != "none":
                include.append("reasoning.encrypted_content")
    tools, more = _responses_tools(request, vendor, keys)
    include += more
    if tools:
        body["tools"] = tools
        choice = request.tool_choice
        body["tool_choice"] = (
            {"type": "function", "name": choice["name"]} if isinstance(choice, Mapping) else choice
        )
        if request.tools:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    if include:
        body["include"] = include
    if request.response_format is not None:
        body["text"] = {
            "format": {
                "type": "json_schema",
                **json_schema_format(request.response_format, vendor, model),
            }
        }
    options, call = split_options(request.options, vendor, model, api="responses")
    if "max_tokens" in options:
        options["max_output_tokens"] = options.pop("max_tokens")
    if "verbosity" in options:
        options["text"] = {**body.get("text", {}), "verbosity": options.pop("verbosity")}
    body.update(options)
    if request.cache is not None or bp:
        cache_fields(body, request, vendor, bp, api="responses")
    if fields:
        check_body_fields(fields, vendor, api="responses")
        merge_vendor_fields(body, fields)
    return body, call


def _responses_tools(
    request: Request, vendor: str, keys: tuple[str, ...]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The body's ``tools`` (native ones first) and the ``include`` entries they need."""
    model = request.model
    tools = [responses_tool(spec, vendor, model, keys) for spec in request.tools]
    if not request.native_tools:
        return tools, []
    natives, more = responses_native_tools(request.native_tools, vendor, model)
    return natives + tools, more


#: Fields of a Responses body ``POST /v1/responses/input_tokens`` takes.
COUNT_FIELDS = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning",
        "text",
        "truncation",
        "conversation",
        "previous_response_id",
    }
)


def build_count_request(body: Mapping[str, Any], call: Mapping[str, Any]) -> dict[str, Any]:
    """The SDK arguments of ``responses.input_tokens.count`` for a built Responses request.

    The token-counting endpoint takes the part of the body that costs input (the
    rest is left out); ``parallel_tool_calls`` is left out at its default (true),
    as the recorded count sends it. ``call`` is the request's SDK options
    (timeout, extra headers), passed through.
    """
    counted = {k: plain(v) for k, v in body.items() if k in COUNT_FIELDS}  # the SDK serializes it
    if counted.get("parallel_tool_calls") is True:
        del counted["parallel_tool_calls"]
    kwargs: dict[str, Any] = {"model": counted.pop("model"), "input": counted.pop("input")}
    kwargs.update(call)
    if counted:
        kwargs["extra_body"] = counted
    return kwargs


def stored_on_openai(request: Request, fields: Mapping[str, Any] | None) -> bool:
    """Whether OpenAI keeps this request's response (``store``: the option or a vendor field)."""
    store = (fields or {}).get("store", request.options.get("store"))
    return store is not False


def responses_input(
    request: Request,
    vendor: str,
    caps: ModelCapabilities,
    bp: bool = False,
    *,
    stored: bool = True,
) -> list[dict[str, Any]]:
    """The ``input`` items (``stored``: OpenAI keeps responses, see :func:`responses_assistant`)."""
    out: list[dict[str, Any]] = []
    model = request.model
    if system_as_parts(request, bp):
        # ``instructions`` is one string with no breakpoint: a system prompt given as several
        # blocks, or marked, is the first input item, one input_text part per block.
        parts = [responses_part(b, vendor, model, caps, bp) for b in request.system_blocks]
        out.append({"role": "system", "content": parts})
    # Source: OpenAI API reference, "Create a model response": an assistant message takes output
    #   text; an image goes back only as the API's own image_generation_call
    #   (responses_assistant); another vendor's answer image goes in the next user message.
    for message in move_answer_media(request.messages, own_generated_image):
        for result in message.tool_results:
            out.append(function_call_output(result, vendor, model, caps))
        if message.role == "assistant":
            out.extend(responses_assistant(message, vendor, model, stored=stored))
        elif message.blocks:
            role = "system" if message.role == "system" else "user"
            blocks = message.blocks
            content: Any
            if (
                len(blocks) == 1
                and isinstance(blocks[0], TextBlock)
                and not (bp and blocks[0].cache)
            ):
                content = blocks[0].text
            else:
                content = [responses_part(b, vendor, model, caps, bp) for b in blocks]
            out.append({"role": role, "content": content})
    return out


def marked_system(request: Request, bp: bool) -> bool:
    """True when the system prompt carries a cache mark the model takes explicitly."""
    return bp and bool(request.system) and any(b.cache is not None for b in request.system_blocks)


def system_as_parts(request: Request, bp: bool) -> bool:
    """Whether the system prompt goes out as a system message of parts (blocks stay blocks).

    Given as several blocks it is sent as blocks (a system message's content
    may be a list of text parts in both APIs); one block is the plain string.
    """
    return len(request.system_blocks) > 1 or marked_system(request, bp)


def function_call_output(
    result: ToolResult, vendor: str, model: str, caps: ModelCapabilities
) -> dict[str, Any]:
    """A tool result; with media, ``output`` is a list of input parts (text first)."""
    output: Any = result.content
    if result.blocks:
        parts = [{"type": "input_text", "text": result.content}] if result.content else []
        parts += [responses_part(b, vendor, model, caps) for b in result.blocks]
        output = parts
    return {"type": "function_call_output", "call_id": result.call_id, "output": output}


def responses_part(
    block: Block, vendor: str, model: str, caps: ModelCapabilities, bp: bool = False
) -> dict[str, Any]:
    part = _responses_part(block, vendor, model, caps)
    if bp:
        mark_breakpoint(part, block, vendor, model)
    return part


def _responses_part(
    block: Block, vendor: str, model: str, caps: ModelCapabilities
) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "input_text", "text": block.text}
    if isinstance(block, FileRef):  # an uploaded file, by id (Responses "File inputs")
        if block.media_type.startswith("image/"):
            return {"type": "input_image", "file_id": block.id, "detail": "auto"}
        return {"type": "input_file", "file_id": block.id}
    if not isinstance(block, MediaBlock):
        raise UnsupportedContentError(
            vendor, model, describe(block), "a user turn takes text, images and files"
        )
    if block.citations:
        raise document_citations(vendor, model)
    kind = media_kind(block, caps)
    if kind == "image":
        return {
            "type": "input_image",
            "image_url": block.url or data_url_of(block),
            "detail": "auto",
        }
    if kind == "audio":
        raise UnsupportedContentError(
            vendor,
            model,
            block.describe(),
            "the Responses API takes no audio input; use 'openai:' "
            "(Chat Completions) with an audio model",
        )
    if kind == "native_file":
        if block.url is not None:
            return {"type": "input_file", "file_url": block.url}
        return {
            "type": "input_file",
            "filename": file_name(block),
            "file_data": data_url_of(block),
        }
    return {"type": "input_text", "text": inline_file(block, kind, vendor, model).text}


def responses_assistant(
    message: Message, vendor: str, model: str, *, stored: bool = True
) -> list[dict[str, Any]]:
    """The answer's items in their order: blocks and calls as the model interleaved them.

    Reasoning and hosted-tool items go back verbatim; a function call goes
    where its ``position`` puts it (the vendor's order), else after the blocks. A text
    block becomes ``{"role": "assistant", "content": text}``; when the answer
    had reasoning items, the message item is echoed whole, with the id the API
    gave it (a reasoning item must be followed by its next item).

    A generated image goes back as the bare ``image_generation_call``
    reference, which OpenAI resolves from the stored response; with
    ``stored=False`` (the request's ``store=False``: OpenAI kept nothing to
    resolve it from) the image itself goes back in the item (:func:`with_image`).
    """
    items: list[dict[str, Any]] = []
    ids = list(message.extra.get(MESSAGE_IDS, ()))
    for block in in_order(message.blocks, message.tool_calls):
        if isinstance(block, ToolCall):
            items.append(function_call_item(block))
        elif isinstance(block, TextBlock):
            if ids:
                items.append(message_item(ids.pop(0), block))
            elif block.text:
                items.append({"role": "assistant", "content": block.text})
        elif isinstance(block, ThinkingBlock):
            items.append(reasoning_item(block))
        elif isinstance(block, (ServerToolCall, ServerToolResult)):
            item = hosted_item(block.raw)
            if item is not None:
                items.append(item)
        elif isinstance(block, MediaBlock) and generated(items):
            if not stored and block.inline:
                items[-1] = with_image(items[-1], block)
            # else: the image of the image_generation_call before it: its reference carries it
        else:
            raise UnsupportedContentError(
                vendor, model, describe(block), "an assistant turn cannot hold media"
            )
    return items


def own_generated_image(blocks: Sequence[Block], index: int) -> bool:
    """Whether ``blocks[index]`` is the image of an ``image_generation`` call right before it.

    Only OpenAI's own calls reach here (the engine drops other vendors' server-tool blocks).
    """
    before = blocks[index - 1] if index > 0 else None
    return isinstance(before, ServerToolCall) and before.name == "image_generation"


def with_image(reference: dict[str, Any], block: MediaBlock) -> dict[str, Any]:
    """An ``image_generation_call`` input item that carries its image (not a bare reference).

    The form of OpenAI's API reference, "Create a model response", input item
    "Image generation call": ``id``, ``result`` (the image, base64), ``status``
    and ``type``, all required.
    """
    return {**reference, "status": "completed", "result": base64_of(block)}


def generated(items: list[dict[str, Any]]) -> bool:
    """Whether the last item is an image generation call (whose image follows it as a block)."""
    return bool(items) and items[-1].get("type") == "image_generation_call"


def hosted_item(raw: Mapping[str, Any]) -> dict[str, Any] | None:
    """A hosted-tool output item as it is sent back (``None``: not sent).

    Verbatim, but for tool search as the recorded tool-search.json sends
    it: a ``tool_search_call`` without a ``call_id`` is given its item id as
    one, and the ``tool_search_output`` of a search the server ran is left
    out. A result without ``raw`` is a view of its call's item: sent once.
    """
    if not raw:
        return None
    kind = raw.get("type")
    if kind == "tool_search_output" and raw.get("execution") == "server":
        return None
    item = dict(raw)
    if kind == "tool_search_call" and item.get("call_id") is None:
        item["call_id"] = item.get("id")
    return item


def function_call_item(call: ToolCall) -> dict[str, Any]:
    """A ``function_call`` input item (its item id and namespace as the API gave them)."""
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": call_arguments(call),
    }
    if call.extra.get("item_id"):
        item["id"] = call.extra["item_id"]
    if call.extra.get("namespace"):
        item["namespace"] = call.extra["namespace"]
    return item


def reasoning_item(block: ThinkingBlock) -> dict[str, Any]:
    """A reasoning item exactly as the API returned it (``extra`` holds its other fields)."""
    item: dict[str, Any] = {"type": "reasoning", **block.extra}
    item.setdefault("summary", [])
    if block.redacted is not None:
        item["encrypted_content"] = block.redacted
    return item


def message_item(item_id: str, block: TextBlock) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "id": item_id,
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "text": block.text,
                "annotations": [annotation(c) for c in block.citations],
            }
        ],
    }


def annotation(citation: Any) -> dict[str, Any]:
    """The Responses annotation a :class:`~llmport.messages.types.Citation` came from."""
    raw = citation.extra.get("annotation")
    if isinstance(raw, Mapping):
        return dict(raw)
    return {
        "type": "url_citation",
        "url": citation.url,
        "title": citation.title,
        "start_index": citation.start,
        "end_index": citation.end,
    }


def responses_tool(
    spec: ToolSpec, vendor: str, model: str, keys: tuple[str, ...] = ("openai", "openai-responses")
) -> dict[str, Any]:
    """A function tool entry (flat); its ``vendor`` fields (``defer_loading``) merge into it."""
    # The Responses API makes tools strict unless told otherwise: always say which.
    entry: dict[str, Any] = {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": tool_parameters(spec, vendor, model),
        "strict": spec.strict,
    }
    if spec.defer_loading:  # the core sends it only with the hosted tool_search
        entry["defer_loading"] = True
    merge_fields(entry, tool_fields(spec, keys))
    return entry


# ---------------------------------------------------------------------------
# Reasoning, caching, native tools
# ---------------------------------------------------------------------------


def reasoning_effort(request: Request, vendor: str, *, api: str) -> str | None:
    """The effort to send for ``request.reasoning`` (checked against the model family).

    A budget alone has no OpenAI equivalent and is refused; with an effort
    the budget is left to vendors that take one (documented).
    """
    r = request.reasoning
    model = request.model
    if r is None:
        return None
    if r.effort is None:
        # Source: OpenAI API reference, "Create a model response"; OpenAI API reference,
        #   "Create chat completion": reasoning.effort / reasoning_effort take an effort, no
        #   token budget.
        if r.budget_tokens is not None:
            raise UnsupportedFeatureError(
                vendor,
                model,
                "reasoning budget_tokens",
                "OpenAI takes an effort, not a token budget; give reasoning='low'|'medium'|"
                "'high' (or Reasoning(effort=..., budget_tokens=...) for vendors that take both)",
            )
        return None
    allowed = efforts_for(model)
    # Source: OpenAI, "Reasoning models" (and the model pages): the reasoning efforts each family
    #   takes (unknown names: every effort).
    if r.effort not in allowed:
        raise UnsupportedFeatureError(
            vendor,
            model,
            f"reasoning effort {r.effort!r}",
            f"this model family takes {', '.join(e for e in _ORDER if e in allowed)}",
        )
    # Source: OpenAI API reference, "Create chat completion": no reasoning summary parameter
    #   (Responses has reasoning.summary).
    if api == "chat" and r.summary:
        raise UnsupportedFeatureError(
            vendor,
            model,
            "reasoning summaries",
            "Chat Completions returns no reasoning text; use 'openai-responses:'",
        )
    return r.effort


_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh")


def responses_reasoning(request: Request, vendor: str) -> dict[str, Any]:
    """``{"effort", "summary"}`` for ``request.reasoning`` (empty when nothing is asked)."""
    r = request.reasoning
    out: dict[str, Any] = {}
    effort = reasoning_effort(request, vendor, api="responses")
    if effort is not None:
        out["effort"] = effort
    if r is not None and r.summary:
        out["summary"] = r.summary
    return out


def mark_breakpoint(part: dict[str, Any], block: Block, vendor: str, model: str) -> None:
    """An explicit cache breakpoint on a content part (models in ``EXPLICIT_CACHE`` only)."""
    cache: CacheControl | None = getattr(block, "cache", None)
    if cache is None:
        return
    check_ttl(cache.ttl, vendor, model)
    part["prompt_cache_breakpoint"] = dict(BREAKPOINT)


def check_ttl(ttl: str | None, vendor: str, model: str) -> None:
    # Source: OpenAI, "Prompt caching": the explicit breakpoint lifetime.
    if ttl not in (None, EXPLICIT_TTL):
        raise UnsupportedFeatureError(
            vendor,
            model,
            f"cache ttl {ttl!r}",
            f"OpenAI's explicit cache breakpoints live {EXPLICIT_TTL}; "
            "use cache={'retention': '24h'} for extended retention",
        )


def cache_fields(
    body: dict[str, Any], request: Request, vendor: str, bp: bool, *, api: str
) -> None:
    """``prompt_cache_key`` / ``prompt_cache_retention`` / ``prompt_cache_options`` from ``cache=``.

    Explicit-breakpoint models get ``prompt_cache_options: {mode: explicit, ttl}``
    when some part carries a breakpoint (the marks are then the only breakpoints).
    """
    model = request.model
    settings = request.cache
    if settings is not None:
        for name, value in (
            ("prompt_cache_key", settings.key),
            ("prompt_cache_retention", settings.retention),
        ):
            if value is None:
                continue
            check_option(name, value)
            if body.get(name, value) != value:
                raise OptionError(f"cache= and {name}= disagree ({value!r} vs {body[name]!r})")
            body[name] = value
    if not bp:
        return
    ttl = settings.ttl if settings is not None else None
    check_ttl(ttl, vendor, model)
    conversation = body["messages" if api == "chat" else "input"]
    if any(
        isinstance(part, dict) and "prompt_cache_breakpoint" in part
        for item in conversation
        if isinstance(item.get("content"), list)
        for part in item["content"]
    ):
        body["prompt_cache_options"] = {"mode": "explicit", "ttl": EXPLICIT_TTL}


#: NativeTool options each API maps (anything else is refused by name).
CHAT_WEB_OPTIONS = frozenset({"search_context_size", "user_location"})
RESPONSES_NATIVE_OPTIONS: dict[str, frozenset[str]] = {
    "web_search": frozenset({"search_context_size", "user_location", "allowed_domains"}),
    "code_execution": frozenset({"container", "file_ids", "files"}),
    "file_search": frozenset({"vector_store_ids", "max_num_results", "filters", "ranking_options"}),
    "tool_search": frozenset({"execution", "description", "parameters"}),
    # Source: OpenAI API reference, "Image generation tool" (Responses): its documented options.
    "image_generation": frozenset(
        {
            "background",
            "input_fidelity",
            "input_image_mask",
            "model",
            "moderation",
            "output_compression",
            "output_format",
            "partial_images",
            "quality",
            "size",
        }
    ),
}


def _native_options(native: NativeTool, allowed: frozenset[str], vendor: str, model: str) -> None:
    # Not a vendor rule: option names llmport does not map are an error (send them with vendor=).
    unknown = set(native.options) - allowed
    if unknown:
        raise UnsupportedFeatureError(
            vendor,
            model,
            f"NativeTool({native.kind!r}) option(s) {', '.join(sorted(map(repr, unknown)))}",
            f"OpenAI maps {', '.join(sorted(allowed)) or 'no options'}",
        )


def container_file_ids(options: Mapping[str, Any], vendor: str, model: str) -> list[str]:
    """``NativeTool("code_execution", files=[ref, ...])``: the uploaded files' ids.

    They go in the code interpreter's ``container.file_ids`` (upload them with
    ``purpose="assistants"``); each must be an OpenAI :class:`FileRef`.
    """
    ids: list[str] = []
    for ref in options.get("files", ()):
        if not isinstance(ref, FileRef) or ref.provider != "openai":
            raise OptionError(
                f"NativeTool('code_execution', files=[...]) takes OpenAI FileRefs "
                f"(rt.upload(..., provider='openai')), got {ref!r:.80} for {model}"
            )
        ids.append(ref.id)
    return ids


def user_location(value: Any, *, nested: bool) -> dict[str, Any]:
    """``{"city": ..., "country": ...}`` (or OpenAI's own shape) as OpenAI's ``user_location``.

    Chat nests the fields under ``approximate``; Responses keeps them flat.
    """
    if not isinstance(value, Mapping):
        raise OptionError(f"user_location must be a dict, got {value!r}")
    fields = dict(value.get("approximate", value))
    fields.pop("type", None)
    if nested:
        return {"type": "approximate", "approximate": fields}
    return {"type": "approximate", **fields}


def chat_native_tools(natives: list[NativeTool], vendor: str, model: str) -> dict[str, Any]:
    """Chat has one native tool: web search on the search models (``web_search_options``)."""
    out: dict[str, Any] = {}
    for native in natives:
        # Source: OpenAI, "Web search" (Chat Completions: web_search_options on the search models
        #   only).
        if native.kind != "web_search":  # Provider.check has refused kinds the model lacks
            raise UnsupportedFeatureError(vendor, model, f"native tool {native.kind!r}")
        _native_options(native, CHAT_WEB_OPTIONS, vendor, model)
        options = dict(native.options)
        if "user_location" in options:
            options["user_location"] = user_location(options["user_location"], nested=True)
        out["web_search_options"] = options
    return out


def responses_native_tools(
    natives: list[NativeTool], vendor: str, model: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """Hosted tool entries (sent before the function tools) and the ``include`` they need."""
    tools: list[dict[str, Any]] = []
    include: list[str] = []
    for native in natives:
        allowed = RESPONSES_NATIVE_OPTIONS.get(native.kind)
        # Source: OpenAI, "Using tools" (Responses built-in tools): the kinds llmport maps.
        if allowed is None:
            raise UnsupportedFeatureError(vendor, model, f"native tool {native.kind!r}")
        _native_options(native, allowed, vendor, model)
        options = dict(native.options)
        if native.kind == "web_search":
            entry: dict[str, Any] = {"type": "web_search"}
            if "allowed_domains" in options:
                entry["filters"] = {"allowed_domains": list(options.pop("allowed_domains"))}
            if "user_location" in options:
                options["user_location"] = user_location(options["user_location"], nested=False)
            entry.update(options)
        elif native.kind == "code_execution":
            container = options.get("container") or {"type": "auto"}
            file_ids = [*options.get("file_ids", ()), *container_file_ids(options, vendor, model)]
            if "file_ids" in options or "files" in options:
                container = {**container, "file_ids": file_ids}
            entry = {"type": "code_interpreter", "container": container}
            include.append("code_interpreter_call.outputs")
        elif native.kind == "tool_search":  # loads the deferred function tools
            entry = {"type": "tool_search", **options}
        elif native.kind == "image_generation":  # as recorded: the options as given, flat
            entry = {"type": "image_generation", **options}
        else:
            ids = options.get("vector_store_ids")
            if not ids or not isinstance(ids, (list, tuple)):
                raise OptionError(
                    "NativeTool('file_search') needs vector_store_ids=[...] on OpenAI"
                )
            entry = {"type": "file_search", **options, "vector_store_ids": list(ids)}
        tools.append(entry)
    return tools, include


# ---------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------


def media_kind(block: MediaBlock, caps: ModelCapabilities) -> str:
    """``image``, ``audio``, ``native_file`` (sent as a file part) or ``inline``.

    Raises nothing itself for capability reasons: :meth:`Provider.prepare`
    (``check_block``) has already ruled out what the model cannot take; the
    callers raise for what the API cannot take at all.
    """
    mt = block.media_type
    if block.type == "image" or mt.startswith("image/"):
        return "image"
    if block.type == "audio" or mt.startswith("audio/"):
        return "audio"
    if mt in caps.file_types:
        return "native_file"
    if is_text_like(mt):
        if block.send != "text" and mt in caps.native_text_files:
            return "native_file"
        return "inline"
    return "unsupported"


def describe(block: Block) -> str:
    """A block for error messages (media blocks describe themselves)."""
    if isinstance(block, MediaBlock):
        return block.describe()
    return f"{block.type} block"


# Source: OpenAI, "Web search"; OpenAI, "File search": citations are annotations on search
#   results, not on documents in the request.
def document_citations(vendor: str, model: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(
        vendor,
        model,
        "document citations",
        "OpenAI cites web search and file search results, not documents sent in the request",
    )


# Source: OpenAI, "File inputs": PDFs as files; other files are refused or, text-like, inlined (the
#   documented rule).
def inline_file(block: MediaBlock, kind: str, vendor: str, model: str) -> TextBlock:
    """The documented rule for text-like files; anything else is refused by name."""
    if kind != "inline":
        raise UnsupportedContentError(
            vendor,
            model,
            block.describe(),
            f"files of type {block.media_type} are not accepted "
            "(native: PDF; text-like files are inlined)",
        )
    return inline_text_file(block, vendor, model)


# Source: OpenAI API reference, "Create chat completion": input_audio and file take data inline
#   (base64) or a file id, not a URL.
def _need_inline(block: MediaBlock, vendor: str, model: str) -> None:
    if not block.inline:
        raise UnsupportedContentError(
            vendor, model, block.describe(), "this API needs the bytes inline, not a URL"
        )


def file_name(block: MediaBlock) -> str:
    if block.filename:
        return block.filename
    ext = {
        "application/pdf": ".pdf",
        "text/plain": ".txt",
        "text/markdown": ".md",
        "text/csv": ".csv",
        "text/html": ".html",
        "application/json": ".json",
    }.get(block.media_type, "")
    return f"file-{block.index}{ext}"


def call_arguments(call: ToolCall) -> str:
    """The arguments text to echo: exactly what the model sent, when known."""
    return call.raw_arguments or json.dumps(call.arguments)


def tool_parameters(spec: ToolSpec, vendor: str, model: str) -> dict[str, Any]:
    params = spec.parameters or {"type": "object", "properties": {}}
    if spec.strict:
        return strict_schema(
            params, vendor=vendor, model=model, feature=f"strict tool {spec.name!r}"
        )
    return params


def json_schema_format(rf: ResponseFormat, vendor: str, model: str) -> dict[str, Any]:
    """``{"name", "schema", "strict"[, "description"]}``, strict-adapted when strict."""
    schema = (
        strict_schema(rf.schema, vendor=vendor, model=model, feature="response_format")
        if rf.strict
        else rf.schema
    )
    out: dict[str, Any] = {"name": rf.name, "schema": schema, "strict": rf.strict}
    if rf.description:
        out["description"] = rf.description
    return out


def split_options(
    options: Mapping[str, Any], vendor: str, model: str, *, api: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(body fields, SDK call arguments) of the options; values checked here.

    Option *names* were checked by ``Provider.check`` (only :data:`KNOWN_OPTIONS`
    reach this point) and the standard options' values by the core.
    """
    body: dict[str, Any] = {}
    call: dict[str, Any] = {}
    for key, value in options.items():
        if value is None:
            continue
        check_option(key, value)
        if key in CALL_OPTIONS:
            call[key] = dict(value) if key == "extra_headers" else value
        # Source: OpenAI API reference, "Create a model response": no stop or seed parameter.
        elif api == "responses" and key in ("stop", "seed"):
            raise UnsupportedFeatureError(
                vendor,
                model,
                f"option {key!r}",
                "the Responses API has no such parameter; use the 'openai:' "
                "prefix (Chat Completions)",
            )
        else:
            body[key] = value
    return body, call


def check_option(key: str, value: Any) -> None:
    """Raise :class:`OptionError` for a value OpenAI does not take (the core checked the rest)."""
    allowed = CHOICES.get(key)
    if allowed is not None:
        ok, want = value in allowed, f"one of {', '.join(allowed)} for OpenAI"
    elif key == "store":
        ok, want = isinstance(value, bool), "True or False"
    elif key in ("prompt_cache_key", "safety_identifier"):
        ok, want = isinstance(value, str) and bool(value), "a non-empty string"
    elif key in ("metadata", "extra_headers"):
        ok = isinstance(value, Mapping) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        )
        want = "a dict of strings to strings"
    else:
        return
    if not ok:
        raise OptionError(f"{key} must be {want}, got {value!r}")


def check_body_fields(fields: Mapping[str, Any], vendor: str, *, api: str) -> None:
    """Refuse ``vendor=`` fields that would replace what llmport sends from the call itself."""
    reserved = [key for key in VENDOR_RESERVED[api] if key in fields]
    if reserved:
        raise OptionError(
            f"vendor={{{vendor!r}: ...}} may not set {', '.join(map(repr, reserved))}: llmport "
            "sends it from the call (model=, the content, stream())"
        )
    tools = fields.get("tools")
    if tools is not None and not (
        isinstance(tools, list) and all(isinstance(t, Mapping) for t in tools)
    ):
        raise OptionError(f"vendor={{{vendor!r}: {{'tools': ...}}}} must be a list of tool objects")


def merge_vendor_fields(body: dict[str, Any], fields: Mapping[str, Any]) -> None:
    """Merge ``vendor=`` fields into ``body``; ``tools`` entries go beside the function tools.

    A native tool such as ``{"type": "tool_search"}`` is sent first, then the
    function tools (whose own fields come from each tool's ``vendor=``).
    """
    if "tools" in fields and body.get("tools"):
        fields = {**fields, "tools": [*fields["tools"], *body.pop("tools")]}
    merge_fields(body, fields)


def merge_fields(target: dict[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """Merge JSON ``fields`` into ``target`` in place: dicts recursively, anything else replaced.

    Values are copied, so the caller's ``vendor`` dicts are never shared with the body.
    """
    for key, value in fields.items():
        current = target.get(key)
        if isinstance(value, Mapping) and isinstance(current, dict):
            target[key] = merge_fields(dict(current), value)
        else:
            target[key] = _copy(value)
    return target


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v) for v in value]
    return value


def vendor_fields(vendor: Mapping[str, Mapping[str, Any]], keys: Iterable[str]) -> dict[str, Any]:
    """The fields of ``vendor`` under each of ``keys``, merged in that order."""
    out: dict[str, Any] = {}
    for key in keys:
        fields = vendor.get(key)
        if fields:
            merge_fields(out, fields)
    return out


def tool_fields(spec: ToolSpec, keys: tuple[str, ...]) -> dict[str, Any]:
    """A tool's own ``vendor`` fields for this provider (empty when it has none)."""
    return vendor_fields(spec.vendor, keys) if spec.vendor else {}


def sdk_kwargs(
    body: Mapping[str, Any],
    call: Mapping[str, Any],
    *,
    conversation: str,
    stream: bool = False,
    stream_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The SDK arguments that put exactly ``body`` on the wire.

    ``model`` and the conversation (``messages`` / ``input``) are the SDK's
    own arguments; every other field travels in ``extra_body``, which the SDK
    merges into the JSON as given (so vendor fields and fields newer than the
    SDK reach the wire unchanged). ``stream`` is an argument too: it decides
    what the SDK returns.
    """
    rest = {k: v for k, v in body.items() if k not in ("model", conversation)}
    if stream and stream_options is not None:
        rest["stream_options"] = merge_fields(dict(stream_options), rest.get("stream_options", {}))
    kwargs: dict[str, Any] = {"model": body["model"], conversation: body[conversation], **call}
    if rest:
        kwargs["extra_body"] = rest
    if stream:
        kwargs["stream"] = True
    return kwargs


def restore_schema(request: Request) -> dict[str, Any] | None:
    """The caller's schema when replies need strict mode's added nulls removed, else None."""
    rf = request.response_format
    if rf is None or not rf.strict or not has_optional(rf.schema):
        return None
    return rf.schema
