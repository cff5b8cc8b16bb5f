"""Cassette scenarios for vendor depth: reasoning, caching, citations,
native tools, native text files and token counting, on both OpenAI APIs.

Replies are built from the real recordings in ``../shared/wire-samples/openai-chat``
and ``openai-responses`` (second batch): the same item types, field sets and id
shapes, shortened texts and opaque ``encrypted_content`` strings. Streamed
replies are derived from the same final objects by :func:`responses_sse` /
:func:`chat_sse`, in the event order the recordings show.
"""

from __future__ import annotations

import copy
from typing import Any

from llmport.messages.types import NativeTool, Reasoning
from llmport.testing.loopback import Reply
from llmport.tools.tool import Tool
from support.openai_scenarios import (
    CREATED,
    DATA,
    Scenario,
    chat_usage,
    chunk,
    completion,
    message_item,
    ok,
    response_obj,
)

# ---------------------------------------------------------------------------
# Streams derived from final objects
# ---------------------------------------------------------------------------


def _pieces(text: str, size: int = 3) -> list[str]:
    words = text.split(" ")
    out = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    return [w if i == 0 else " " + w for i, w in enumerate(out)]


def responses_sse(final: dict[str, Any]) -> list[dict[str, Any]]:
    """The Responses event stream that ends in ``final`` (as in reasoning-stream.json)."""
    started = {**final, "status": "in_progress", "output": [], "usage": None}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": started}),
        ("response.in_progress", {"response": started}),
    ]
    for index, item in enumerate(final["output"]):
        kind = item["type"]
        if kind == "reasoning":
            events.append(
                (
                    "response.output_item.added",
                    {"output_index": index, "item": {**item, "summary": []}},
                )
            )
            for n, part in enumerate(item["summary"]):
                base = {"item_id": item["id"], "output_index": index, "summary_index": n}
                events.append(
                    (
                        "response.reasoning_summary_part.added",
                        {**base, "part": {"type": "summary_text", "text": ""}},
                    )
                )
                for piece in _pieces(part["text"]):
                    events.append(
                        (
                            "response.reasoning_summary_text.delta",
                            {**base, "delta": piece, "obfuscation": "x"},
                        )
                    )
                events.append(
                    ("response.reasoning_summary_text.done", {**base, "text": part["text"]})
                )
                events.append(("response.reasoning_summary_part.done", {**base, "part": part}))
        elif kind == "message":
            events.append(
                (
                    "response.output_item.added",
                    {
                        "output_index": index,
                        "item": {**item, "status": "in_progress", "content": []},
                    },
                )
            )
            for c, part in enumerate(item["content"]):
                base = {"item_id": item["id"], "output_index": index, "content_index": c}
                empty = {**part, "annotations": [], "text": ""}
                events.append(("response.content_part.added", {**base, "part": empty}))
                for piece in _pieces(part["text"]):
                    events.append(
                        ("response.output_text.delta", {**base, "delta": piece, "logprobs": []})
                    )
                for a, annotation in enumerate(part["annotations"]):
                    events.append(
                        (
                            "response.output_text.annotation.added",
                            {**base, "annotation_index": a, "annotation": annotation},
                        )
                    )
                events.append(
                    ("response.output_text.done", {**base, "text": part["text"], "logprobs": []})
                )
                events.append(("response.content_part.done", {**base, "part": part}))
        else:
            added = {**item, "status": "in_progress"}
            events.append(("response.output_item.added", {"output_index": index, "item": added}))
        events.append(("response.output_item.done", {"output_index": index, "item": item}))
    events.append(("response.completed", {"response": final}))
    return [
        {"event": name, "data": {"type": name, **data, "sequence_number": i}}
        for i, (name, data) in enumerate(events)
    ]


def chat_sse(final: dict[str, Any]) -> list[Any]:
    """The Chat chunk stream of ``final`` (annotations arrive on the last content delta)."""
    cid, model = final["id"], final["model"]
    message = final["choices"][0]["message"]
    events: list[Any] = [
        chunk(cid, {"role": "assistant", "content": "", "refusal": None}, model=model)
    ]
    pieces = _pieces(message["content"])
    for n, piece in enumerate(pieces):
        delta: dict[str, Any] = {"content": piece}
        if n == len(pieces) - 1 and message.get("annotations"):
            delta["annotations"] = message["annotations"]
        events.append(chunk(cid, delta, model=model))
    events += [
        chunk(cid, {}, finish=final["choices"][0]["finish_reason"], model=model),
        chunk(cid, None, usage=final["usage"], model=model),
        "[DONE]",
    ]
    return events


# ---------------------------------------------------------------------------
# Replies from the wire samples
# ---------------------------------------------------------------------------

ENCRYPTED_1 = "gAAAAABoxC0_aDtrISw_zls0dyams-nhm23et1xecYaqlI8y44ih0g9FA5T3R9ueXIOX9seSr-opaque-1"
ENCRYPTED_2 = "gAAAAABozbpoKwjspVdWvC2skgCFSKx1Fiw9QGDrOxixFaC8O5gPVmC35FfE2jaedsn0zsHc-opaque-2"
ENCRYPTED_3 = "gAAAAABozbpoJefk0Fp1xqQzY6ego00t7KnH2ohbIw-rR9ZgaEAQs3n0Fubka6xbgRxzb1og-opaque-3"

PLAN_SUMMARY = [
    {
        "type": "summary_text",
        "text": "**Creating a structured poem**\n\nI need to craft a 6-line acrostic: odd lines "
        "spell SAM, even lines spell DAW.",
    },
    {
        "type": "summary_text",
        "text": "**Updating the plan**\n\nI should record the steps with the update_plan tool.",
    },
]
REASONING_PLAN = {
    "encrypted_content": ENCRYPTED_1,
    "id": "rs_68c42d29124881968e24c1ca8c1fc7860e8bc41441c948f6",
    "summary": PLAN_SUMMARY,
    "type": "reasoning",
}
PLAN_CALL = {
    "arguments": '{"plan":"1) Pick capitals per letter. 2) Write lines. 3) Check acrostics."}',
    "call_id": "call_gL7JE6GDeGGsFubqO2XGytyO",
    "id": "fc_68c42d3e9e4881968b15fbb8253f58540e8bc41441c948f6",
    "name": "update_plan",
    "status": "completed",
    "type": "function_call",
}
POEM = "Softly old fountains illumine alleys\nDunes over harbor aglow"


def update_plan(plan: str) -> str:
    return "plan updated"


def plan_tool() -> Tool:
    return Tool.from_schema(
        "update_plan",
        "",
        {"type": "object", "properties": {"plan": {"type": "string"}}, "required": ["plan"]},
        update_plan,
        strict=True,
    )


def _msg(id: str, text: str, annotations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    item = message_item(id, text)
    item.pop("phase", None)
    item["content"][0]["annotations"] = annotations or []
    return item


WEB_TEXT = (
    "Here are three stories from today:\n\n- The UN backs a two-state roadmap. "
    "(reuters.com)\n- Nepal appoints an interim premier. (apnews.com)"
)
WEB_ANNOTATIONS = [
    {
        "end_index": 85,
        "start_index": 37,
        "title": "UN overwhelmingly endorses two-state solution declaration",
        "type": "url_citation",
        "url": "https://www.reuters.com/world/un-two-state-2025-09-12/?utm_source=openai",
    },
    {
        "end_index": 135,
        "start_index": 88,
        "title": "Nepal's president appoints former chief justice as interim premier",
        "type": "url_citation",
        "url": "https://apnews.com/article/aad7af5ddfb56b7484fa9db591297c9e?utm_source=openai",
    },
]
WEB_OUTPUT = [
    {
        "encrypted_content": ENCRYPTED_2,
        "id": "rs_0e3d55e9502941380068c4aaa4efb081958605d7b31e838366",
        "summary": [],
        "type": "reasoning",
    },
    {
        "action": {"query": "top world news September 12, 2025 Reuters", "type": "search"},
        "id": "ws_0e3d55e9502941380068c4aaab56508195a1effa9583720d20",
        "status": "completed",
        "type": "web_search_call",
    },
    _msg("msg_0e3d55e9502941380068c4aada6d8c8195b8b6f92edbb53b4f", WEB_TEXT, WEB_ANNOTATIONS),
]

CODE_OUTPUT = [
    {
        "encrypted_content": ENCRYPTED_2,
        "id": "rs_68cdba57390881a3b7ef1d2de5c8499709b7445677780c8f",
        "summary": [
            {
                "type": "summary_text",
                "text": "**Calculating expression order**\n\nI need to compute the expression.",
            }
        ],
        "type": "reasoning",
    },
    {
        "code": "# compute the value\n65465 - 6544 * 65464 - 6 + 1.02255\n",
        "container_id": "cntr_68cdba56addc81918f656db25fd0a6800d6da575ea4fee9b",
        "id": "ci_68cdba5af39881a393a01eebb253854e09b7445677780c8f",
        "outputs": [{"logs": "-428330955.97745", "type": "logs"}],
        "status": "completed",
        "type": "code_interpreter_call",
    },
    {
        "encrypted_content": ENCRYPTED_3,
        "id": "rs_68cdba63843881a3a9c585d83e4df9f309b7445677780c8f",
        "summary": [
            {"type": "summary_text", "text": "**Considering numeric results**\n\nGive the number."}
        ],
        "type": "reasoning",
    },
    _msg(
        "msg_68cdba6652ac81a3a58625883261465809b7445677780c8f",
        "65465 - 6544 * 65464 - 6 + 1.02255 = -428330955.97745",
    ),
]

FILE_OUTPUT = [
    {
        "id": "fs_019d8541afd6ed8d006931d7382ef481998c5cd3117a0ff8fe",
        "queries": ["Eiffel Tower"],
        "results": None,
        "status": "completed",
        "type": "file_search_call",
    },
    _msg(
        "msg_019d8541afd6ed8d006931d73a862c8199a0dbac16717a3da7",
        "The Eiffel Tower is a famous landmark in Paris, the capital of France.",
        [
            {
                "file_id": "file-U6Ke78qu8nkANsrCrjoYBr",
                "filename": "tmp2zuepgia.txt",
                "index": 69,
                "type": "file_citation",
            }
        ],
    ),
]

STREET_TEXT = "Look both ways, wait for the walk signal, then cross at the crosswalk."
STREET_OUTPUT = [
    {
        "id": "rs_68c42d1d0878819d8266007cd3d1402c08fbf9b1584184ff",
        "type": "reasoning",
        "encrypted_content": ENCRYPTED_3,
        "summary": [
            {
                "type": "summary_text",
                "text": "**Providing street crossing instructions**\n\nThe user asks for safety.",
            },
            {
                "type": "summary_text",
                "text": "**Explaining street crossing safety**\n\nUse crosswalks and signals.",
            },
        ],
    },
    _msg("msg_68c42d26866c819da8d5c606621c911608fbf9b1584184ff", STREET_TEXT),
]

SEARCH_TEXT = "It is sunny in Utrecht at 22°C. ([weer.nl](https://www.weer.nl/utrecht))"
SEARCH_ANNOTATIONS = [
    {
        "type": "url_citation",
        "url_citation": {
            "end_index": 72,
            "start_index": 32,
            "title": "Weer Utrecht",
            "url": "https://www.weer.nl/utrecht",
        },
    }
]
CACHE_PREFIX = "Reference catalogue for the prompt cache test corpus.\n" + "".join(
    f"Entry {n:03d}: item {n} of the catalogue.\n" for n in range(40)
)


def chat_completion(id: str, content: str, usage: dict[str, Any], model: str, **more: Any) -> Any:
    body = completion(id, content=content, usage=usage, model=model)
    body["choices"][0]["message"].update(more)
    return body


def responses(
    id: str, output: list[dict[str, Any]], usage: tuple[int, int, int, int], model: str
) -> Any:
    return response_obj(id, copy.deepcopy(output), usage=usage, model=model)


def depth_scenarios() -> list[Scenario]:
    reasoning_1 = responses(
        "resp_68c42d28772c819684459966ee2201ed",
        [REASONING_PLAN, PLAN_CALL],
        (124, 1926, 0, 1792),
        "gpt-5-2025-08-07",
    )
    reasoning_2 = responses(
        "resp_68c42d3fd6a08196bce23d6be960ff8a",
        [_msg("msg_68c42d408eec8196ae1c5883e07c093e", POEM)],
        (2087, 124, 2048, 0),
        "gpt-5-2025-08-07",
    )
    street = responses(
        "resp_68c42d0fb418819dbfa579f69406b495",
        STREET_OUTPUT,
        (13, 1506, 0, 1216),
        "o3-mini-2025-01-31",
    )
    web = responses(
        "resp_0e3d55e9502941380068c4aa9a62f481",
        WEB_OUTPUT,
        (115886, 1720, 92160, 1472),
        "gpt-5-2025-08-07",
    )
    code = responses(
        "resp_68cdba511c7081a389e67b16621029c6",
        CODE_OUTPUT,
        (1493, 125, 1280, 64),
        "gpt-5-2025-08-07",
    )
    code_2 = responses(
        "resp_68cdba6a610481a3b4533f345bea8a7b",
        [
            {
                "encrypted_content": ENCRYPTED_1,
                "id": "rs_68cdba6c100481a394047de63f3e175009b7445677780c8f",
                "summary": [],
                "type": "reasoning",
            },
            _msg("msg_68cdba6e02c881a3802ed88715e0be4709b7445677780c8f", "256"),
        ],
        (793, 7, 0, 0),
        "gpt-5-2025-08-07",
    )
    files = responses(
        "resp_019d8541afd6ed8d006931d73741bc81", FILE_OUTPUT, (1188, 55, 0, 0), "gpt-4o-2024-08-06"
    )
    text_file = responses(
        "resp_0textfile01",
        [_msg("msg_0textfile01", "The note says: buy kiwis.")],
        (64, 8, 0, 0),
        "gpt-4.1-mini-2025-04-14",
    )
    reasoning_kwargs = lambda: dict(  # noqa: E731
        content='Compose a 6-line poem whose odd lines spell "SAM" and even lines "DAW".',
        system="You are a helpful assistant that uses planning. Use the update_plan tool.",
        tools=[plan_tool()],
        reasoning=Reasoning(effort="low", summary="detailed"),
    )
    chat_reasoning = chat_completion(
        "chatcmpl-CENUmtwDD0HdvTUYL6lUeijDtxrZL",
        "Find a bridge or a ferry; never wade across fast water.",
        chat_usage(577, 2320, reasoning=1792),
        "o3-mini-2025-01-31",
    )
    search = chat_completion(
        "chatcmpl-da029146-a630-4224-9d12-7d808b031fbc",
        SEARCH_TEXT,
        chat_usage(12, 293),
        "gpt-4o-search-preview-2025-03-11",
        annotations=SEARCH_ANNOTATIONS,
    )
    cache_usage = chat_usage(4020, 4)
    cache_usage["prompt_tokens_details"]["cache_write_tokens"] = 4012
    cached = chat_completion(
        "chatcmpl-E1mBLGr3Ql1FsH8cdc76XdGw3PleH", "OK", cache_usage, "gpt-5.6-sol"
    )
    cache_kwargs = lambda: dict(  # noqa: E731
        content=[
            {"type": "text", "text": CACHE_PREFIX, "cache": True},
            {"type": "text", "text": "Reply with exactly: OK"},
        ],
        cache={"key": "llmport-prompt-cache-e2e-chat"},
    )
    search_kwargs = lambda: dict(  # noqa: E731
        content="What is the current temperature?",
        system="You are a helpful assistant.",
        tools=[
            NativeTool(
                "web_search",
                search_context_size="medium",
                user_location={"city": "Utrecht", "country": "NL"},
            )
        ],
    )
    web_kwargs = lambda: dict(  # noqa: E731
        content="Give me the top 3 news in the world today", tools=[NativeTool("web_search")]
    )
    code_kwargs = lambda: dict(  # noqa: E731
        content="what is 65465-6544 * 65464-6+1.02255",
        tools=[NativeTool("code_execution")],
        reasoning=Reasoning(effort="low", summary="detailed"),
    )
    file_kwargs = lambda: dict(  # noqa: E731
        content="Tell me about the Eiffel Tower.",
        system="You are a helpful assistant.",
        tools=[NativeTool("file_search", vector_store_ids=["vs_6931d72a43048191bbe7518b93c1d8ed"])],
    )
    return [
        # --- Responses: reasoning ---------------------------------------------------
        Scenario(
            "responses_reasoning_loop",
            "openai-responses:gpt-5",
            reasoning_kwargs,
            [ok(reasoning_1, "req_rreason01"), ok(reasoning_2, "req_rreason02")],
            how="wire-samples/openai-responses/reasoning-tool-loop.json (texts shortened)",
        ),
        Scenario(
            "responses_reasoning_loop_stream",
            "openai-responses:gpt-5",
            reasoning_kwargs,
            [Reply(sse=responses_sse(reasoning_1)), Reply(sse=responses_sse(reasoning_2))],
            stream=True,
            how="wire-samples/openai-responses/reasoning-tool-loop.json, streamed in the event "
            "order of reasoning-stream.json",
        ),
        Scenario(
            "responses_reasoning_stream",
            "openai-responses:o3-mini",
            lambda: dict(
                content="How do I cross the street?",
                reasoning=Reasoning(effort="high", summary="detailed"),
            ),
            [Reply(sse=responses_sse(street))],
            stream=True,
            how="wire-samples/openai-responses/reasoning-stream.json (texts shortened)",
        ),
        Scenario(
            "responses_reasoning_text",
            "openai-responses:o3-mini",
            lambda: dict(
                content="How do I cross the street?",
                reasoning=Reasoning(effort="high", summary="detailed"),
            ),
            [ok(street, "req_rstreet01")],
            how="wire-samples/openai-responses/reasoning-stream.json, as one JSON answer",
        ),
        # --- Responses: native tools and citations -------------------------------------
        Scenario(
            "responses_web_search",
            "openai-responses:gpt-5",
            web_kwargs,
            [ok(web, "req_rweb01")],
            how="wire-samples/openai-responses/citations-web-search.json (one search, offsets "
            "recomputed for the shortened text)",
        ),
        Scenario(
            "responses_web_search_stream",
            "openai-responses:gpt-5",
            web_kwargs,
            [Reply(sse=responses_sse(web))],
            stream=True,
            how="citations-web-search.json streamed (output_item and annotation.added events)",
        ),
        Scenario(
            "responses_code_interpreter",
            "openai-responses:gpt-5",
            code_kwargs,
            [ok(code, "req_rcode01"), ok(code_2, "req_rcode02")],
            then=lambda run: {
                **code_kwargs(),
                "content": "how about 2 to the power of 8?",
                "history": run.messages,
            },
            how="wire-samples/openai-responses/native-code-interpreter.json (two turns; the "
            "second echoes reasoning and code_interpreter_call items verbatim)",
        ),
        Scenario(
            "responses_code_interpreter_stream",
            "openai-responses:gpt-5",
            code_kwargs,
            [Reply(sse=responses_sse(code))],
            stream=True,
            how="native-code-interpreter.json, first turn streamed",
        ),
        Scenario(
            "responses_file_search",
            "openai-responses:gpt-4o",
            file_kwargs,
            [ok(files, "req_rfile01")],
            how="wire-samples/openai-responses/native-file-search.json (second turn)",
        ),
        Scenario(
            "responses_file_search_stream",
            "openai-responses:gpt-4o",
            file_kwargs,
            [Reply(sse=responses_sse(files))],
            stream=True,
            how="native-file-search.json streamed",
        ),
        # --- Responses: files and token counting ------------------------------------------
        Scenario(
            "responses_text_file",
            "openai-responses:gpt-4.1-mini",
            lambda: dict(
                content=[
                    "What does the note say?",
                    {"type": "file", "path": str(DATA / "note.txt")},
                ]
            ),
            [ok(text_file, "req_rtxt01")],
            how="OpenAI's documented input_file part (filename + file_data) for text/plain; "
            "reply shaped as wire-samples/openai-responses/text.json",
        ),
        Scenario(
            "responses_count_tokens",
            "openai-responses:gpt-4.1-mini",
            lambda: dict(content="What is the weather in Paris?"),
            [Reply(json={"object": "response.input_tokens", "input_tokens": 51})],
            kind="count",
            how="wire-samples/openai-responses/count-tokens.json",
        ),
        # --- Chat: reasoning, web search, caching ----------------------------------------
        Scenario(
            "chat_reasoning",
            "openai:o3-mini",
            lambda: dict(content="How do I cross the river?", reasoning="high"),
            [ok(chat_reasoning, "req_creason01")],
            how="wire-samples/openai-chat/reasoning-effort.json",
        ),
        Scenario(
            "chat_reasoning_stream",
            "openai:o3-mini",
            lambda: dict(content="How do I cross the river?", reasoning="high"),
            [Reply(sse=chat_sse(chat_reasoning))],
            stream=True,
            how="reasoning-effort.json streamed as in openai-chat/stream-text.json",
        ),
        Scenario(
            "chat_web_search",
            "openai:gpt-4o-search-preview",
            search_kwargs,
            [ok(search, "req_cweb01")],
            how="wire-samples/openai-chat/native-web-search.json (a url_citation annotation added, "
            "per OpenAI's documented Chat annotation format)",
        ),
        Scenario(
            "chat_web_search_stream",
            "openai:gpt-4o-search-preview",
            search_kwargs,
            [Reply(sse=chat_sse(search))],
            stream=True,
            how="native-web-search.json streamed; annotations on the last content delta",
        ),
        Scenario(
            "chat_prompt_cache",
            "openai:gpt-5.6-sol",
            cache_kwargs,
            [ok(cached, "req_ccache01")],
            how="wire-samples/openai-chat/prompt-cache.json (first call: cache write)",
        ),
        Scenario(
            "chat_prompt_cache_stream",
            "openai:gpt-5.6-sol",
            cache_kwargs,
            [Reply(sse=chat_sse(cached))],
            stream=True,
            how="prompt-cache.json streamed",
        ),
    ]


NOTE_TEXT = "Buy kiwis.\n"
_ = CREATED
