"""Wire adapters: what each target looks like on the wire, for the contract suite.

Every contract test is written once, against :class:`Wire`, and runs for
every adapter in :data:`TARGETS`. An adapter knows, for one target:

* how a Runtime reaches the loopback server (``endpoint_settings``) and how
  keys are configured (``credentials`` / ``env`` / ``config_toml``);
* the vendor's replies: ``text_reply``, ``tool_call_reply``,
  ``stream_text_reply``, ``stream_tool_call_reply``, ``error_reply``, ...
  (built with the scenario helpers of ``tests/<vendor>/``, which are modelled
  on the recordings in ``../shared/wire-samples/<vendor>/``);
* where things land in the vendor's request body (``tool_results``,
  ``structured_schema``, ``vendor_field``) and the request ``path``.

Adding a vendor = one more :class:`Wire` subclass appended to
:data:`TARGETS`; every contract test then runs for it. ``callonly`` is a
plugin of this suite's own (``call_only.py``) written against the ``_call``
contract alone; the few checks that cannot apply to it are listed
with their reason in :data:`NOT_APPLICABLE`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any, ClassVar

import call_only
from llmport import Runtime
from llmport.testing import recording_backoff
from llmport.testing.loopback import LoopbackServer, Reply
from support import anthropic_scenarios as anth
from support import bedrock_scenarios as bed
from support import gemini_scenarios as gem
from support import openai_scenarios as oai
from support.vertex_support import FakeCredentials

__all__ = [
    "EMBED_ONLY_TARGETS",
    "MISSING",
    "NOT_APPLICABLE",
    "PROFILE_TARGETS",
    "TARGETS",
    "Wire",
    "make_runtime",
    "profile_modes",
    "raised",
    "targets",
]

#: ``vendor_field`` found nothing.
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()

#: The custom (shapeless) key every target is also tested with.
CUSTOM_KEY = "LEAKcustomproxykey-0123456789abcdef"


class Wire:
    """One target of the contract: a model string plus its vendor's wire format."""

    #: pytest id of the target.
    id: ClassVar[str]
    #: The model every contract test calls.
    model: ClassVar[str]
    #: The provider prefix: the ``providers={...}`` key and the ``vendor={...}`` name.
    provider: ClassVar[str]
    #: The company behind the API: ``vendor=`` fields of another company never reach
    #: this target (two APIs of one company may share fields: ``vendor={"openai": ...}``).
    company: ClassVar[str]
    #: The environment variable(s) a missing key error must name (the first is enough).
    key_env: ClassVar[tuple[str, ...]]
    #: Transient HTTP statuses retried by llmport for this vendor (all get 500 and 503).
    transient_statuses: ClassVar[tuple[int, ...]] = (500, 503)
    #: Whether the vendor's tool calls carry ids (then each tool result must answer its id).
    tool_call_ids: ClassVar[bool] = True
    #: The top-level fields of the vendor's success answer that hold the answer itself
    #: (a 200 with one of the wrong type is a MalformedResponseError).
    answer_fields: ClassVar[tuple[str, ...]] = ()
    #: Plugin objects the target needs that are not installed entry points (registered
    #: process-wide for each test by the ``installed`` fixture, as installing would).
    plugins: ClassVar[tuple[Any, ...]] = ()

    # -- configuration ---------------------------------------------------------------

    def endpoint_settings(self, url: str) -> dict[str, Any]:
        """Provider settings that point the plugin at the loopback server (no key)."""
        raise NotImplementedError

    def keyless_settings(self, url: str) -> dict[str, Any]:
        """Settings for the "no key configured" case (a key must then be required)."""
        return self.endpoint_settings(url)

    def credentials(self, fmt: str = "test") -> dict[str, Any]:
        """Key settings: ``"test"`` (plain), ``"standard"`` (vendor-shaped), ``"custom"``.

        Values are strings but on Gemini on Vertex AI (a google-auth credentials object
        holding the token: ``secrets`` names the token)."""
        raise NotImplementedError

    def secrets(self, creds: dict[str, Any]) -> list[str]:
        """The values of ``creds`` that must never leak."""
        return list(creds.values())

    def env(self, creds: dict[str, Any]) -> dict[str, str]:
        """``creds`` as the vendor's usual environment variables (for the CLI)."""
        raise NotImplementedError

    def config_toml(self, url: str) -> str:
        """An ``llmport.toml`` pointing this provider at ``url`` (never holds a key)."""
        lines = [f"[providers.{self.provider}]"]
        lines += [f"{k} = {json.dumps(v)}" for k, v in self.endpoint_settings(url).items()]
        return "\n".join(lines) + "\n"

    # -- requests ----------------------------------------------------------------------

    def path(self, stream: bool = False) -> str:
        """The request path (a substring of it) the plugin calls."""
        raise NotImplementedError

    def tool_results(self, body: Any) -> list[tuple[str | None, str]]:
        """(call id or None, the result serialised) of every tool result in a request body."""
        raise NotImplementedError

    def structured_schema(self, body: Any) -> dict[str, Any]:
        """The JSON schema the body sends through the vendor's native mechanism.

        Raises AssertionError naming the field when the mechanism is absent.
        """
        raise NotImplementedError

    def vendor_fields(self, name: str, value: Any) -> dict[str, Any]:
        """``vendor=`` fields that carry a free-form field ``name`` to this vendor's body."""
        return {name: value}

    def vendor_field(self, body: Any, name: str) -> Any:
        """Where a ``vendor={provider: {name: ...}}`` field lands in the body (else MISSING)."""
        return body.get(name, MISSING) if isinstance(body, dict) else MISSING

    # -- replies -----------------------------------------------------------------------

    def text_reply(self, text: str) -> Reply:
        raise NotImplementedError

    def tool_call_reply(self, name: str, args: dict[str, Any], call_id: str) -> Reply:
        raise NotImplementedError

    def stream_text_reply(self, chunks: list[str]) -> Reply:
        raise NotImplementedError

    def stream_tool_call_reply(self, name: str, fragments: list[str], call_id: str) -> Reply:
        """A streamed turn asking for one tool call whose JSON arguments come in ``fragments``."""
        raise NotImplementedError

    def truncated_stream_reply(self, chunks: list[str]) -> Reply:
        """A streamed text answer cut in the middle (connection closed)."""
        reply = self.stream_text_reply(chunks)
        reply.truncate = True
        return reply

    def error_reply(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Reply:
        """The vendor's error for an HTTP-like ``status`` (400, 401, 404, 429, 5xx, 529)."""
        raise NotImplementedError

    def rate_limit_reply(self, retry_after: str) -> Reply:
        return self.error_reply(429, "Rate limit reached", {"retry-after": retry_after})

    def malformed_reply(self) -> Reply:
        """A 200 whose JSON body is cut short."""
        whole = json.dumps(self.text_reply("fine").json)
        return Reply(body=whole[: len(whole) // 2].encode())

    def structured_reply(self, json_text: str) -> Reply:
        """The answer carrying ``json_text`` as the vendor's structured output."""
        return self.text_reply(json_text)

    @property
    def api(self) -> str:
        """The wire format: the target's id, or the API it shares (Vertex AI's targets)."""
        return self.id

    def __repr__(self) -> str:
        return self.id


# ---------------------------------------------------------------------------
# OpenAI Chat Completions
# ---------------------------------------------------------------------------


def _openai_error_kind(status: int) -> tuple[str, str | None]:
    return {
        400: ("invalid_request_error", None),
        401: ("invalid_request_error", "invalid_api_key"),
        404: ("invalid_request_error", "model_not_found"),
        429: ("requests", "rate_limit_exceeded"),
    }.get(status, ("server_error", None))


class OpenAIChatWire(Wire):
    id = "openai-chat"
    model = "openai:gpt-4o-mini"
    provider = "openai"
    answer_fields = ("choices",)
    company = "openai"
    key_env = ("OPENAI_API_KEY",)
    _model_version = "gpt-4o-mini-2024-07-18"

    def endpoint_settings(self, url: str) -> dict[str, Any]:
        return {"base_url": url + "/v1"}

    def keyless_settings(self, url: str) -> dict[str, Any]:
        # A base_url documentedly makes the key optional (local servers need none),
        # so the missing-key case runs without one (the network guard catches escapes).
        return {}

    def credentials(self, fmt: str = "test") -> dict[str, str]:
        return {
            "test": {"api_key": "contract-test-key"},
            "standard": {"api_key": "sk-proj-fake-test-key-for-openai-contract-suite"},
            "custom": {"api_key": CUSTOM_KEY},
        }[fmt]

    def env(self, creds: dict[str, str]) -> dict[str, str]:
        return {"OPENAI_API_KEY": creds["api_key"]}

    def path(self, stream: bool = False) -> str:
        return "/v1/chat/completions"

    def tool_results(self, body: Any) -> list[tuple[str | None, str]]:
        return [
            (m.get("tool_call_id"), json.dumps(m.get("content")))
            for m in body.get("messages", [])
            if m.get("role") == "tool"
        ]

    def structured_schema(self, body: Any) -> dict[str, Any]:
        rf = body.get("response_format")
        assert isinstance(rf, dict) and rf.get("type") == "json_schema", (
            f"openai chat: response_format.type == 'json_schema' expected, got {rf!r}"
        )
        return dict(rf["json_schema"]["schema"])

    def text_reply(self, text: str) -> Reply:
        return Reply(
            json=oai.completion(
                "chatcmpl-contract",
                content=text,
                usage=oai.chat_usage(5, 1),
                model=self._model_version,
            )
        )

    def tool_call_reply(self, name: str, args: dict[str, Any], call_id: str) -> Reply:
        return Reply(
            json=oai.completion(
                "chatcmpl-contract-tool",
                finish="tool_calls",
                usage=oai.chat_usage(20, 10),
                tool_calls=[oai.tool_call(call_id, name, args)],
                model=self._model_version,
            )
        )

    def stream_text_reply(self, chunks: list[str]) -> Reply:
        return Reply(sse=oai._stream_text_chunks("chatcmpl-contract-stream", chunks))

    def stream_tool_call_reply(self, name: str, fragments: list[str], call_id: str) -> Reply:
        cid = "chatcmpl-contract-stool"
        events: list[Any] = [oai.chunk(cid, {"role": "assistant", "content": None})]
        events.append(
            oai.chunk(
                cid,
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                },
            )
        )
        events += [
            oai.chunk(cid, {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
            for piece in fragments
        ]
        events += [
            oai.chunk(cid, {}, finish="tool_calls"),
            oai.chunk(cid, None, usage=oai.chat_usage(20, 10)),
            "[DONE]",
        ]
        return Reply(sse=events)

    def error_reply(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Reply:
        kind, code = _openai_error_kind(status)
        return Reply(
            status=status,
            json=oai.error_body(message, kind, code),
            headers={"x-request-id": "req_contract", **(headers or {})},
        )


# ---------------------------------------------------------------------------
# OpenAI-compatible services
# ---------------------------------------------------------------------------


class CompatWire(OpenAIChatWire):
    """A Chat Completions service reached through its profile (its prefix and key variable).

    Replies are OpenAI's chunk and object shapes, which these services answer
    in (``tests/compat/samples`` holds their real recordings).
    """

    #: The path the service's base URL ends with.
    base_path: ClassVar[str] = "/v1"
    #: A key in the service's own shape (for the "standard" credentials).
    standard_key: ClassVar[str] = "compat-standard-fake-key-0123456789abcdef"
    #: The body field ``max_tokens=`` goes in, and the message field reasoning comes back
    #: in ("" where the service's is not a string field), as the service documents.
    max_tokens_field: ClassVar[str] = "max_tokens"
    reasoning_field: ClassVar[str] = ""

    def endpoint_settings(self, url: str) -> dict[str, Any]:
        return {"base_url": url + self.base_path}

    def keyless_settings(self, url: str) -> dict[str, Any]:
        return self.endpoint_settings(url)  # the service needs its key even at this URL

    def credentials(self, fmt: str = "test") -> dict[str, str]:
        return {
            "test": {"api_key": "contract-test-key"},
            "standard": {"api_key": self.standard_key},
            "custom": {"api_key": CUSTOM_KEY},
        }[fmt]

    def env(self, creds: dict[str, str]) -> dict[str, str]:
        return {self.key_env[0]: creds["api_key"]}

    def path(self, stream: bool = False) -> str:
        return self.base_path + "/chat/completions"


class GroqWire(CompatWire):
    id = "groq"
    model = "groq:llama-3.3-70b-versatile"
    provider = company = "groq"
    key_env = ("GROQ_API_KEY",)
    base_path = "/openai/v1"
    standard_key = "gsk_fakeGroqKeyForTheContractSuite0123456789abcdef"
    _model_version = "llama-3.3-70b-versatile"
    max_tokens_field = "max_completion_tokens"  # console.groq.com/docs/openai
    reasoning_field = "reasoning"


class OpenRouterWire(CompatWire):
    id = "openrouter"
    model = "openrouter:openai/gpt-4o-mini"
    provider = company = "openrouter"
    key_env = ("OPENROUTER_API_KEY",)
    base_path = "/api/v1"
    standard_key = "sk-or-v1-fakeopenrouterkeyforthecontractsuite0123456789"
    _model_version = "openai/gpt-4o-mini"
    reasoning_field = "reasoning"


class MistralWire(CompatWire):
    id = "mistral"
    model = "mistral:mistral-large-latest"
    provider = company = "mistral"
    key_env = ("MISTRAL_API_KEY",)
    standard_key = "FakeMistralKeyForTheContractSuite0123"
    _model_version = "mistral-large-latest"


class OllamaWire(CompatWire):
    id = "ollama"
    model = "ollama:qwen3:0.6b"
    provider = company = "ollama"
    key_env = ("OLLAMA_API_KEY",)
    _model_version = "qwen3:0.6b"
    reasoning_field = "reasoning"

    def keyless_settings(self, url: str) -> dict[str, Any]:
        # A local server needs no key; Ollama Cloud does (checked before any request).
        return {"base_url": "https://ollama.com/v1"}


class DeepSeekWire(CompatWire):
    """DeepSeek: no ``/v1``; a schema travels as JSON mode plus the schema in a system message."""

    id = "deepseek"
    model = "deepseek:deepseek-chat"
    provider = company = "deepseek"
    key_env = ("DEEPSEEK_API_KEY",)
    base_path = ""
    standard_key = "sk-fake-deepseek-key-for-the-contract-suite-0123"
    _model_version = "deepseek-chat"
    reasoning_field = "reasoning_content"

    def structured_schema(self, body: Any) -> dict[str, Any]:
        assert body.get("response_format") == {"type": "json_object"}, (
            f"deepseek: response_format json_object expected, got {body.get('response_format')!r}"
        )
        system = [m["content"] for m in body["messages"] if m.get("role") == "system"]
        assert system, "deepseek: the schema belongs in a system message"
        schema: dict[str, Any] = json.loads(system[-1].rsplit("\n", 1)[-1])
        return schema


class VllmWire(CompatWire):
    id = "vllm"
    model = "vllm:Qwen/Qwen3-0.6B"
    provider = company = "vllm"
    key_env = ("VLLM_API_KEY",)
    _model_version = "Qwen/Qwen3-0.6B"
    reasoning_field = "reasoning_content"


class LMStudioWire(CompatWire):
    id = "lmstudio"
    model = "lmstudio:qwen/qwen3-4b"
    provider = company = "lmstudio"
    key_env = ("LMSTUDIO_API_KEY",)
    _model_version = "qwen/qwen3-4b"
    reasoning_field = "reasoning_content"


class XaiWire(CompatWire):
    id = "xai"
    model = "xai:grok-4"
    provider = company = "xai"
    key_env = ("XAI_API_KEY",)
    standard_key = (  # xai- and 80 letters and digits
        "xai-FakeXaiKeyForTheContractSuite0a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4Yz"
    )
    _model_version = "grok-4-0709"
    max_tokens_field = "max_completion_tokens"
    reasoning_field = "reasoning_content"


class TogetherWire(CompatWire):
    id = "together"
    model = "together:meta-llama/Llama-3.3-70B-Instruct-Turbo"
    provider = company = "together"
    key_env = ("TOGETHER_API_KEY",)
    standard_key = "tgp_v1_FakeTogetherKeyForTheContractSuite0123456789ab"
    _model_version = "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    reasoning_field = "reasoning"


class FireworksWire(CompatWire):
    id = "fireworks"
    model = "fireworks:accounts/fireworks/models/llama-v3p3-70b-instruct"
    provider = company = "fireworks"
    key_env = ("FIREWORKS_API_KEY",)
    base_path = "/inference/v1"
    standard_key = "fw_FakeFireworksKeyForTheContractSuite01"
    _model_version = "accounts/fireworks/models/llama-v3p3-70b-instruct"
    reasoning_field = "reasoning_content"


class CerebrasWire(CompatWire):
    id = "cerebras"
    model = "cerebras:llama-3.3-70b"
    provider = company = "cerebras"
    key_env = ("CEREBRAS_API_KEY",)
    standard_key = "csk-fakecerebraskeyforthecontractsuite0123456789ab"
    _model_version = "llama-3.3-70b"
    max_tokens_field = "max_completion_tokens"
    reasoning_field = "reasoning"


class HuggingFaceWire(CompatWire):
    id = "huggingface"
    model = "huggingface:meta-llama/Llama-3.3-70B-Instruct"
    provider = company = "huggingface"
    key_env = ("HF_TOKEN",)
    standard_key = "hf_FakeHuggingFaceTokenForTheContractSuit"
    _model_version = "meta-llama/Llama-3.3-70B-Instruct"


# ---------------------------------------------------------------------------
# OpenAI Responses
# ---------------------------------------------------------------------------


class OpenAIResponsesWire(OpenAIChatWire):
    id = "openai-responses"
    model = "openai-responses:gpt-4o-mini"
    provider = "openai-responses"
    answer_fields = ("output",)

    def path(self, stream: bool = False) -> str:
        return "/v1/responses"

    def tool_results(self, body: Any) -> list[tuple[str | None, str]]:
        items = body.get("input", [])
        return [
            (i.get("call_id"), json.dumps(i.get("output")))
            for i in (items if isinstance(items, list) else [])
            if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]

    def structured_schema(self, body: Any) -> dict[str, Any]:
        fmt = (body.get("text") or {}).get("format")
        assert isinstance(fmt, dict) and fmt.get("type") == "json_schema", (
            f"openai responses: text.format.type == 'json_schema' expected, got {fmt!r}"
        )
        return dict(fmt["schema"])

    def _response(self, rid: str, output: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
        return oai.response_obj(rid, output, usage=(5, 1, 0, 0), model=self._model_version, **kw)

    def text_reply(self, text: str) -> Reply:
        return Reply(json=self._response("resp_contract", [oai.message_item("msg_c", text)]))

    def _call_item(self, name: str, arguments: str, call_id: str, status: str) -> dict[str, Any]:
        return {
            "id": "fc_contract",
            "type": "function_call",
            "status": status,
            "call_id": call_id,
            "name": name,
            "arguments": arguments,
        }

    def tool_call_reply(self, name: str, args: dict[str, Any], call_id: str) -> Reply:
        item = self._call_item(name, json.dumps(args), call_id, "completed")
        return Reply(json=self._response("resp_contract_tool", [item]))

    def _events(self, final: dict[str, Any], middle: list[tuple[str, dict[str, Any]]]) -> Reply:
        started = {**final, "status": "in_progress", "output": [], "usage": None}
        events = [
            ("response.created", {"response": started}),
            ("response.in_progress", {"response": started}),
            *middle,
            ("response.completed", {"response": final}),
        ]
        return Reply(
            sse=[
                {"event": name, "data": {"type": name, **data, "sequence_number": i}}
                for i, (name, data) in enumerate(events)
            ]
        )

    def stream_text_reply(self, chunks: list[str]) -> Reply:
        mid, text = "msg_cstream", "".join(chunks)
        final = self._response("resp_cstream", [oai.message_item(mid, text)])
        part = {"type": "output_text", "annotations": [], "logprobs": []}
        where = {"output_index": 0, "content_index": 0, "item_id": mid}
        middle: list[tuple[str, dict[str, Any]]] = [
            (
                "response.output_item.added",
                {
                    "output_index": 0,
                    "item": {**oai.message_item(mid, ""), "status": "in_progress", "content": []},
                },
            ),
            ("response.content_part.added", {**where, "part": {**part, "text": ""}}),
            *(
                ("response.output_text.delta", {**where, "delta": c, "logprobs": []})
                for c in chunks
            ),
            ("response.output_text.done", {**where, "text": text, "logprobs": []}),
            ("response.content_part.done", {**where, "part": {**part, "text": text}}),
            ("response.output_item.done", {"output_index": 0, "item": oai.message_item(mid, text)}),
        ]
        return self._events(final, middle)

    def stream_tool_call_reply(self, name: str, fragments: list[str], call_id: str) -> Reply:
        arguments = "".join(fragments)
        done = self._call_item(name, arguments, call_id, "completed")
        final = self._response("resp_cstool", [done])
        where = {"output_index": 0, "item_id": "fc_contract"}
        middle: list[tuple[str, dict[str, Any]]] = [
            (
                "response.output_item.added",
                {"output_index": 0, "item": self._call_item(name, "", call_id, "in_progress")},
            ),
            *(("response.function_call_arguments.delta", {**where, "delta": f}) for f in fragments),
            ("response.function_call_arguments.done", {**where, "arguments": arguments}),
            ("response.output_item.done", {"output_index": 0, "item": done}),
        ]
        return self._events(final, middle)


class DeepSeekResponsesWire(OpenAIResponsesWire):
    """DeepSeek's Responses-compatible endpoint: no ``/v1``, DeepSeek's key, no json_schema."""

    id = "deepseek-responses"
    model = "deepseek-responses:deepseek-chat"
    provider = company = "deepseek-responses"
    key_env = ("DEEPSEEK_API_KEY",)
    _model_version = "deepseek-chat"
    max_tokens_field = "max_output_tokens"

    def endpoint_settings(self, url: str) -> dict[str, Any]:
        return {"base_url": url}

    def credentials(self, fmt: str = "test") -> dict[str, str]:
        standard = {"api_key": DeepSeekWire.standard_key}
        return standard if fmt == "standard" else super().credentials(fmt)

    def env(self, creds: dict[str, str]) -> dict[str, str]:
        return {"DEEPSEEK_API_KEY": creds["api_key"]}

    def path(self, stream: bool = False) -> str:
        return "/responses"

    def structured_schema(self, body: Any) -> dict[str, Any]:
        fmt = (body.get("text") or {}).get("format")
        assert fmt == {"type": "json_object"}, (
            f"deepseek-responses: text.format json_object expected, got {fmt!r}"
        )
        instructions = body.get("instructions")
        assert instructions, "deepseek-responses: the schema belongs in instructions"
        schema: dict[str, Any] = json.loads(instructions.rsplit("\n", 1)[-1])
        return schema


# ---------------------------------------------------------------------------
# Anthropic Messages
# ---------------------------------------------------------------------------


class AnthropicWire(Wire):
    id = "anthropic"
    model = "anthropic:claude-sonnet-4-5"
    provider = "anthropic"
    answer_fields = ("content",)
    company = "anthropic"
    key_env = ("ANTHROPIC_API_KEY",)
    transient_statuses = (500, 503, 529)
    _model_version = anth.SONNET

    def endpoint_settings(self, url: str) -> dict[str, Any]:
        return {"base_url": url}

    def credentials(self, fmt: str = "test") -> dict[str, str]:
        return {
            "test": {"api_key": "contract-test-key"},
            "standard": {
                "api_key": "sk-ant-api03-fake-test-key-for-anthropic-contract-suite"
                "w3Xy4Za5Bc6De7Fg8Hi9Jk0Lm1No2Pq3Rs4Tu5Vw6Xy7Za8Bc9De0Fg1Hi2JkQAA"
            },
            "custom": {"api_key": CUSTOM_KEY},
        }[fmt]

    def env(self, creds: dict[str, str]) -> dict[str, str]:
        return {"ANTHROPIC_API_KEY": creds["api_key"]}

    def path(self, stream: bool = False) -> str:
        return "/v1/messages"

    def tool_results(self, body: Any) -> list[tuple[str | None, str]]:
        out: list[tuple[str | None, str]] = []
        for message in body.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append((block.get("tool_use_id"), json.dumps(block.get("content"))))
        return out

    def structured_schema(self, body: Any) -> dict[str, Any]:
        fmt = (body.get("output_config") or {}).get("format")
        if isinstance(fmt, dict):
            assert fmt.get("type") == "json_schema", f"anthropic: output_config.format {fmt!r}"
            return dict(fmt["schema"])
        choice = body.get("tool_choice") or {}
        assert choice.get("type") == "tool", (
            "anthropic: neither output_config.format nor a forced tool in the request "
            f"(tool_choice={choice!r})"
        )
        (tool,) = [t for t in body.get("tools", []) if t.get("name") == choice.get("name")]
        return dict(tool["input_schema"])

    def _message(self, content: list[dict[str, Any]], stop: str) -> Reply:
        body = anth.message("msg_01Contract", self._model_version, content, stop, anth.usage(5, 1))
        return Reply(json=body)

    def text_reply(self, text: str) -> Reply:
        return self._message([{"type": "text", "text": text}], "end_turn")

    def tool_call_reply(self, name: str, args: dict[str, Any], call_id: str) -> Reply:
        return self._message(
            [{"type": "tool_use", "id": call_id, "name": name, "input": args}], "tool_use"
        )

    def stream_text_reply(self, chunks: list[str]) -> Reply:
        return Reply(sse=anth.text_stream("msg_01CStream", self._model_version, chunks, 5, 2))

    def stream_tool_call_reply(self, name: str, fragments: list[str], call_id: str) -> Reply:
        def block(kind: str, **data: Any) -> dict[str, Any]:
            return {"event": kind, "data": {"type": kind, "index": 0, **data}}

        events = [
            anth._start("msg_01CSTool", self._model_version, 20),
            block(
                "content_block_start",
                content_block={"type": "tool_use", "id": call_id, "name": name, "input": {}},
            ),
            *(
                block(
                    "content_block_delta",
                    delta={"type": "input_json_delta", "partial_json": f},
                )
                for f in fragments
            ),
            block("content_block_stop"),
            *anth._end("tool_use", 20, 10),
        ]
        return Reply(sse=events)

    def error_reply(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Reply:
        kind = {
            400: "invalid_request_error",
            401: "authentication_error",
            404: "not_found_error",
            429: "rate_limit_error",
            529: "overloaded_error",
        }.get(status, "api_error")
        return Reply(
            status=status,
            json=anth.error(kind, message, "req_contract"),
            headers={"request-id": "req_contract", **(headers or {})},
        )


# ---------------------------------------------------------------------------
# Gemini (google-genai, Developer API)
# ---------------------------------------------------------------------------


class GeminiWire(Wire):
    id = "gemini"
    model = "gemini:gemini-2.5-flash"
    provider = "gemini"
    answer_fields = ("candidates",)
    company = "google"
    key_env = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    tool_call_ids = False  # the Developer API sends calls without ids

    def endpoint_settings(self, url: str) -> dict[str, Any]:
        return {"base_url": url, "api_version": "v1beta"}

    def credentials(self, fmt: str = "test") -> dict[str, str]:
        return {
            "test": {"api_key": "contract-test-key"},
            "standard": {"api_key": "AIzaFAKE-test-key-for-gemini-contract-suite"},
            "custom": {"api_key": CUSTOM_KEY},
        }[fmt]

    def env(self, creds: dict[str, str]) -> dict[str, str]:
        return {"GEMINI_API_KEY": creds["api_key"]}

    def path(self, stream: bool = False) -> str:
        verb = "streamGenerateContent" if stream else "generateContent"
        return f"/v1beta/models/gemini-2.5-flash:{verb}"

    def tool_results(self, body: Any) -> list[tuple[str | None, str]]:
        out: list[tuple[str | None, str]] = []
        for content in body.get("contents", []):
            for part in content.get("parts", []):
                fr = part.get("functionResponse") or part.get("function_response")
                if fr is not None:
                    out.append((fr.get("id"), json.dumps(fr.get("response"))))
        return out

    def structured_schema(self, body: Any) -> dict[str, Any]:
        config = body.get("generationConfig") or body.get("generation_config") or {}
        schema = config.get("responseJsonSchema") or config.get("response_json_schema")
        assert isinstance(schema, dict), (
            f"gemini: generationConfig.responseJsonSchema expected, got generationConfig={config!r}"
        )
        return dict(schema)

    def vendor_field(self, body: Any, name: str) -> Any:
        found = super().vendor_field(body, name)
        if found is MISSING:
            found = (body.get("generationConfig") or {}).get(name, MISSING)
        return found

    def text_reply(self, text: str) -> Reply:
        return Reply(json=gem.answer("contract", [{"text": text}], gem.usage(5, 1)))

    def tool_call_reply(self, name: str, args: dict[str, Any], call_id: str) -> Reply:
        # The Developer API sends calls whole and without ids (wire-samples/gemini).
        part = {"functionCall": {"name": name, "args": args}}
        return Reply(json=gem.answer("contract-tool", [part], gem.usage(20, 10)))

    def stream_text_reply(self, chunks: list[str]) -> Reply:
        return Reply(sse=gem.text_stream("contract-stream", chunks, 5, 2))

    def stream_tool_call_reply(self, name: str, fragments: list[str], call_id: str) -> Reply:
        # Gemini streams function calls whole: one chunk with the assembled arguments.
        args = json.loads("".join(fragments))
        part = {"functionCall": {"name": name, "args": args}}
        return Reply(sse=[{"data": gem.answer("contract-stool", [part], gem.usage(20, 10))}])

    def error_reply(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Reply:
        grpc = {
            400: "INVALID_ARGUMENT",
            401: "UNAUTHENTICATED",
            404: "NOT_FOUND",
            429: "RESOURCE_EXHAUSTED",
            500: "INTERNAL",
            503: "UNAVAILABLE",
        }.get(status, "UNKNOWN")
        return Reply(status=status, json=gem.error(status, grpc, message), headers=headers or {})


# ---------------------------------------------------------------------------
# Vertex AI: Claude (anthropic SDK's AnthropicVertex) and Gemini (google-genai)
# ---------------------------------------------------------------------------

#: The project and regions the Vertex AI targets name (any: the loopback takes them all).
VERTEX_PROJECT = "llmport-contract"


class AnthropicVertexWire(AnthropicWire):
    """Claude on Vertex AI: the Messages API under ``:rawPredict``, a Google access token."""

    id = "anthropic-vertex"
    model = "anthropic-vertex:claude-sonnet-4-5@20250929"
    provider = "anthropic-vertex"
    company = "anthropic"  # vendor={"anthropic": ...} applies here too (the same API)
    #: No key variable: Application Default Credentials (none on a contract host).
    key_env = ("GOOGLE_APPLICATION_CREDENTIALS",)
    api = "anthropic"  # type: ignore[assignment]  # the Messages API, as the anthropic target

    def endpoint_settings(self, url: str) -> dict[str, Any]:
        return {"base_url": url + "/v1", "region": "us-east5", "project_id": VERTEX_PROJECT}

    def keyless_settings(self, url: str) -> dict[str, Any]:
        # With a base_url of its own an instance never reads ADC: without one, it must
        # look them up, find none (conftest) and refuse before any request.
        return {"region": "us-east5", "project_id": VERTEX_PROJECT}

    def credentials(self, fmt: str = "test") -> dict[str, Any]:
        return {
            "test": {"access_token": "contract-test-token"},
            "standard": {"access_token": "ya29.a0FAKE-test-token-for-the-vertex-contract-suite"},
            "custom": {"access_token": CUSTOM_KEY},
        }[fmt]

    def env(self, creds: dict[str, Any]) -> dict[str, str]:
        return {}  # a Google access token has no environment variable (NO_ENV_KEY)

    def path(self, stream: bool = False) -> str:
        verb = "streamRawPredict" if stream else "rawPredict"
        return f"/publishers/anthropic/models/claude-sonnet-4-5@20250929:{verb}"


class GeminiVertexWire(GeminiWire):
    """Gemini on Vertex AI: google-genai's Vertex AI client with google-auth credentials."""

    id = "gemini-vertex"
    model = "gemini-vertex:gemini-2.5-flash"
    provider = "gemini-vertex"
    key_env = ("GOOGLE_APPLICATION_CREDENTIALS",)
    api = "gemini"  # type: ignore[assignment]  # the Gemini API, as the gemini target

    def endpoint_settings(self, url: str) -> dict[str, Any]:
        return {"base_url": url, "project": VERTEX_PROJECT, "location": "us-central1"}

    def keyless_settings(self, url: str) -> dict[str, Any]:
        return {"location": "us-central1"}  # no project: ADC are looked up, and there are none

    def credentials(self, fmt: str = "test") -> dict[str, Any]:
        token = {
            "test": "contract-test-token",
            "standard": "ya29.a0FAKE-test-token-for-the-vertex-contract-suite",
            "custom": CUSTOM_KEY,
        }[fmt]
        return {"credentials": FakeCredentials(token=token)}

    def secrets(self, creds: dict[str, Any]) -> list[str]:
        return [creds["credentials"].token]

    def env(self, creds: dict[str, Any]) -> dict[str, str]:
        return {}  # google-auth credentials have no environment variable (NO_ENV_KEY)

    def path(self, stream: bool = False) -> str:
        verb = "streamGenerateContent" if stream else "generateContent"
        where = f"/v1/projects/{VERTEX_PROJECT}/locations/us-central1/publishers/google"
        return f"{where}/models/gemini-2.5-flash:{verb}"


# ---------------------------------------------------------------------------
# Bedrock (boto3 Converse / ConverseStream)
# ---------------------------------------------------------------------------


class BedrockWire(Wire):
    id = "bedrock"
    model = f"bedrock:{bed.SONNET_45}"
    provider = "bedrock"
    answer_fields = ("output",)
    company = "aws"
    key_env = ("AWS_ACCESS_KEY_ID",)

    def endpoint_settings(self, url: str) -> dict[str, Any]:
        return {"region": bed.REGION, "endpoint_url": url}

    def credentials(self, fmt: str = "test") -> dict[str, str]:
        return {
            "test": dict(bed.CREDENTIALS),
            "standard": {
                "aws_access_key_id": "AKIAFAKEFAKEFAKEFAKE",
                "aws_secret_access_key": "fake/test/secret/access/key/for/bedrock/contract",
            },
            "custom": {
                "aws_access_key_id": CUSTOM_KEY,
                "aws_secret_access_key": "LEAKcustomproxysecret-0123456789abcdef",
            },
        }[fmt]

    def env(self, creds: dict[str, str]) -> dict[str, str]:
        return {
            "AWS_ACCESS_KEY_ID": creds["aws_access_key_id"],
            "AWS_SECRET_ACCESS_KEY": creds["aws_secret_access_key"],
        }

    def path(self, stream: bool = False) -> str:
        return "/converse-stream" if stream else "/converse"

    def tool_results(self, body: Any) -> list[tuple[str | None, str]]:
        out: list[tuple[str | None, str]] = []
        for message in body.get("messages", []):
            for block in message.get("content", []):
                if "toolResult" in block:
                    result = block["toolResult"]
                    out.append((result.get("toolUseId"), json.dumps(result.get("content"))))
        return out

    def structured_schema(self, body: Any) -> dict[str, Any]:
        text_format = (body.get("outputConfig") or {}).get("textFormat")
        if isinstance(text_format, dict):
            schema = text_format["structure"]["jsonSchema"]["schema"]
            assert isinstance(schema, str), "bedrock: outputConfig takes the schema as a string"
            return dict(json.loads(schema))
        choice = (body.get("toolConfig") or {}).get("toolChoice") or {}
        assert "tool" in choice, (
            "bedrock: neither outputConfig.textFormat nor a forced tool in the request "
            f"(toolChoice={choice!r})"
        )
        name = choice["tool"]["name"]
        specs = [t["toolSpec"] for t in body["toolConfig"]["tools"] if "toolSpec" in t]
        (spec,) = [s for s in specs if s["name"] == name]
        return dict(spec["inputSchema"]["json"])

    def vendor_fields(self, name: str, value: Any) -> dict[str, Any]:
        # Converse's body is a closed schema (botocore refuses unknown top-level
        # fields before sending): model-specific fields go in additionalModelRequestFields.
        return {"additionalModelRequestFields": {name: value}}

    def vendor_field(self, body: Any, name: str) -> Any:
        found = super().vendor_field(body, name)
        if found is MISSING:
            found = (body.get("additionalModelRequestFields") or {}).get(name, MISSING)
        return found

    def text_reply(self, text: str) -> Reply:
        return bed.json_reply(bed.answer([{"text": text}], "end_turn", bed.usage(5, 1)), "c-text")

    def tool_call_reply(self, name: str, args: dict[str, Any], call_id: str) -> Reply:
        block = {"toolUse": {"toolUseId": call_id, "name": name, "input": args}}
        return bed.json_reply(bed.answer([block], "tool_use", bed.usage(20, 10)), "c-tool")

    def stream_text_reply(self, chunks: list[str]) -> Reply:
        return bed.stream_reply(bed.text_events(chunks, 5, 2), "c-stream")

    def stream_tool_call_reply(self, name: str, fragments: list[str], call_id: str) -> Reply:
        events = [
            bed.ev("messageStart", role="assistant"),
            bed.ev(
                "contentBlockStart",
                contentBlockIndex=0,
                start={"toolUse": {"toolUseId": call_id, "name": name}},
            ),
            *(
                bed.ev("contentBlockDelta", contentBlockIndex=0, delta={"toolUse": {"input": f}})
                for f in fragments
            ),
            bed.ev("contentBlockStop", contentBlockIndex=0),
            bed.ev("messageStop", stopReason="tool_use"),
            bed.ev("metadata", metrics={"latencyMs": 100}, usage=bed.usage(20, 10)),
        ]
        return bed.stream_reply(events, "c-stool")

    def error_reply(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Reply:
        # Bedrock answers a bad key with 403 UnrecognizedClientException (never 401).
        status, code = {
            400: (400, "ValidationException"),
            401: (403, "UnrecognizedClientException"),
            404: (404, "ResourceNotFoundException"),
            429: (429, "ThrottlingException"),
            500: (500, "InternalServerException"),
            503: (503, "ServiceUnavailableException"),
        }[status]
        return bed.error_reply(status, code, message, "c-error", headers)


# ---------------------------------------------------------------------------
# tiny chat: this suite's plugin written against the `_call` contract only (call_only.py)
# ---------------------------------------------------------------------------


class CallOnlyStreamWire(Wire):
    """``_call`` / ``_async_call`` / ``_stream`` / ``_astream``, and nothing else."""

    id = "callonly-stream"
    model = f"{call_only.STREAMING_PREFIX}:tiny-1"
    provider = call_only.STREAMING_PREFIX
    company = "tiny"
    key_env = (call_only.ENV_KEY,)
    plugins = (call_only,)

    def endpoint_settings(self, url: str) -> dict[str, Any]:
        return {"base_url": url}

    def credentials(self, fmt: str = "test") -> dict[str, str]:
        return {
            "test": {"api_key": "contract-test-key"},
            "standard": {"api_key": "tiny-live-fake-test-key-for-the-call-only-contract"},
            "custom": {"api_key": CUSTOM_KEY},
        }[fmt]

    def env(self, creds: dict[str, str]) -> dict[str, str]:
        return {call_only.ENV_KEY: creds["api_key"]}

    def path(self, stream: bool = False) -> str:
        return "/v1/tiny/stream" if stream else "/v1/tiny/chat"

    def tool_results(self, body: Any) -> list[tuple[str | None, str]]:
        return [
            (m.get("id"), json.dumps(m.get("output")))
            for m in body.get("messages", [])
            if m.get("role") == "tool"
        ]

    def structured_schema(self, body: Any) -> dict[str, Any]:
        schema = body.get("schema")
        assert isinstance(schema, dict), f"tiny chat: a 'schema' expected, got {schema!r}"
        return schema

    def _answer(self, **fields: Any) -> dict[str, Any]:
        return {"id": "tiny-contract", "model": "tiny-1", "stop": "end", **fields}

    def text_reply(self, text: str) -> Reply:
        return Reply(json=self._answer(text=text, usage={"in": 5, "out": 1}))

    def tool_call_reply(self, name: str, args: dict[str, Any], call_id: str) -> Reply:
        calls = [{"id": call_id, "name": name, "args": args}]
        return Reply(json=self._answer(calls=calls, stop="tool_use", usage={"in": 20, "out": 10}))

    def _done(self, stop: str) -> dict[str, Any]:
        return {"data": {"type": "done", **self._answer(stop=stop, usage={"in": 5, "out": 2})}}

    def stream_text_reply(self, chunks: list[str]) -> Reply:
        events = [{"data": {"type": "text", "text": c}} for c in chunks]
        return Reply(sse=[*events, self._done("end")])

    def stream_tool_call_reply(self, name: str, fragments: list[str], call_id: str) -> Reply:
        start = {"data": {"type": "call", "id": call_id, "name": name}}
        args = [{"data": {"type": "args", "id": call_id, "fragment": f}} for f in fragments]
        return Reply(sse=[start, *args, self._done("tool_use")])

    def error_reply(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Reply:
        body = {"error": {"message": message, "code": f"tiny_{status}"}}
        return Reply(status=status, json=body, headers=headers or {})


class CallOnlyWire(CallOnlyStreamWire):
    """``_call`` / ``_async_call`` only: a stream is the whole answer, replayed by the core."""

    id = "callonly"
    model = f"{call_only.PREFIX}:tiny-1"
    provider = call_only.PREFIX

    def path(self, stream: bool = False) -> str:
        return "/v1/tiny/chat"

    def stream_text_reply(self, chunks: list[str]) -> Reply:
        return self.text_reply("".join(chunks))

    def stream_tool_call_reply(self, name: str, fragments: list[str], call_id: str) -> Reply:
        return self.tool_call_reply(name, json.loads("".join(fragments)), call_id)

    def truncated_stream_reply(self, chunks: list[str]) -> Reply:
        return self.malformed_reply()  # the whole answer, cut short


# ---------------------------------------------------------------------------
# Vendors that only embed (the llmport-cohere and llmport-voyage plugins)
# ---------------------------------------------------------------------------


class EmbedOnlyWire(Wire):
    """A vendor reached for embeddings only: its key and base URL. Its answers are
    ``embed_targets``'s (no chat reply: the chat contract does not run on it)."""

    def endpoint_settings(self, url: str) -> dict[str, Any]:
        return {"base_url": url}

    def credentials(self, fmt: str = "test") -> dict[str, str]:
        return {
            "test": {"api_key": "contract-test-key"},
            "standard": {"api_key": f"{self.provider}-standard-fake-key-0123456789abcdef"},
            "custom": {"api_key": CUSTOM_KEY},
        }[fmt]

    def env(self, creds: dict[str, str]) -> dict[str, str]:
        return {self.key_env[0]: creds["api_key"]}


class CohereWire(EmbedOnlyWire):
    id = "cohere"
    model = "cohere:embed-v4.0"
    provider = company = "cohere"
    key_env = ("CO_API_KEY",)


class VoyageWire(EmbedOnlyWire):
    id = "voyage"
    model = "voyage:voyage-3.5"
    provider = company = "voyage"
    key_env = ("VOYAGE_API_KEY",)


#: Every target of the contract. A new vendor: add its adapter here.
TARGETS: list[Wire] = [
    OpenAIChatWire(),
    OpenAIResponsesWire(),
    AnthropicWire(),
    GeminiWire(),
    BedrockWire(),
    AnthropicVertexWire(),
    GeminiVertexWire(),
    CallOnlyWire(),
    CallOnlyStreamWire(),
    GroqWire(),
    DeepSeekWire(),
    OllamaWire(),
    MistralWire(),
    OpenRouterWire(),
]

#: Why the checks that give a key through the environment skip Vertex AI's targets.
_NO_ENV_KEY = (
    "Vertex AI takes Google credentials (an access token or a credentials object in the "
    "settings, else Application Default Credentials), not a key in an environment variable"
)

#: (target id, contract test) -> why that check cannot apply to that target.
NOT_APPLICABLE: dict[tuple[str, str], str] = {
    **{
        (target, test): _NO_ENV_KEY
        for target in ("anthropic-vertex", "gemini-vertex")
        for test in (
            "test_no_secret_in_cli_output",
            "test_the_vendor_provider_still_reads_its_environment_key",
            "test_an_instance_with_its_own_endpoint_sends_its_api_key_env",
        )
    },
    ("callonly", "test_text_deltas_add_up_to_the_final_text"): (
        "a plugin without _stream has no incremental stream: the core replays its whole "
        "answer as one text delta (the stream's other checks run on it)"
    ),
    **{
        ("callonly", test): (
            "a plugin without _stream delivers its answer only once whole: a cut answer "
            "fails before the caller has any of it, so it is retried unseen (checked by "
            "test_stream_failing_before_any_event_is_retried_unseen)"
        )
        for test in (
            "test_stream_cut_after_text_raises_stream_interrupted_never_splices",
            "test_stream_retry_restart_announces_the_restart_then_the_whole_new_answer",
        )
    },
}


#: The other built-in profiles of the openai plugin. Not in :data:`TARGETS`:
#: their wire is the one GroqWire & co. already run everywhere, so only the contract
#: areas where a profile's own quirks matter (key variable, base URL path, error
#: bodies, structured output) run for them: faults, secrets, bad input, structured
#: output, each lean (see :func:`profile_modes`). vLLM and LM Studio take no key
#: locally, so they have no missing-key case.
PROFILE_TARGETS: list[Wire] = [
    VllmWire(),
    LMStudioWire(),
    XaiWire(),
    TogetherWire(),
    FireworksWire(),
    CerebrasWire(),
    HuggingFaceWire(),
    DeepSeekResponsesWire(),
]


#: Vendors that only embed: the embedding contract (test_contract_embeddings) runs on them
#: beside the targets above; the chat contract cannot.
EMBED_ONLY_TARGETS: list[Wire] = [CohereWire(), VoyageWire()]


def targets(test: str, extra_profiles: bool = False) -> list[Wire]:
    """The targets ``test`` runs on: every target but those :data:`NOT_APPLICABLE` says
    (and :data:`PROFILE_TARGETS` too with ``extra_profiles``)."""
    pool = TARGETS + PROFILE_TARGETS if extra_profiles else TARGETS
    return [w for w in pool if (w.id, test) not in NOT_APPLICABLE]


def profile_modes(wires: list[Wire], modes: list[str]) -> list[tuple[Wire, str]]:
    """(target, mode) cases: every one of ``wires`` in every mode, each profile target in one.

    The profiles take the modes in turn (vllm sync, lmstudio async, ...), so every
    mode runs on some profile while each profile adds one case, not ``len(modes)``.
    """
    cases = [(w, m) for w in wires for m in modes]
    cases += [(w, modes[i % len(modes)]) for i, w in enumerate(PROFILE_TARGETS)]
    return cases


def make_runtime(
    wire: Wire,
    server: LoopbackServer,
    *,
    creds: dict[str, str] | None = None,
    delays: list[float] | None = None,
    max_retries: int = 3,
    settings: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Runtime:
    """A Runtime for ``wire`` pointed at ``server``; its backoff records delays, never sleeps."""
    creds = wire.credentials() if creds is None else creds
    return Runtime(
        model=wire.model,
        max_retries=max_retries,
        backoff=recording_backoff(delays if delays is not None else [], jitter=False, initial=0.25),
        providers={
            wire.provider: {**wire.endpoint_settings(server.url), **creds, **(settings or {})}
        },
        **kwargs,
    )


async def raised(call: Awaitable[Any]) -> BaseException | None:
    """The exception ``call`` raised, or None (so a test can say what happened instead)."""
    try:
        await call
    except Exception as exc:
        return exc
    return None
