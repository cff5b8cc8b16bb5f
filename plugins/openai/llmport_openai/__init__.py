"""llmport provider plugin for OpenAI: Chat Completions and the Responses API.

Prefixes: ``openai:`` (Chat Completions) and ``openai-responses:`` (Responses).

Importing this package imports nothing from the ``openai`` SDK. Modules:
:mod:`~llmport_openai.plugin` (the entry point: registration),
:mod:`~llmport_openai.models` (capability tables),
:mod:`~llmport_openai.provider` (settings, clients, prepare/send),
:mod:`~llmport_openai.convert_in` / :mod:`~llmport_openai.convert_out`
(wire formats) and :mod:`~llmport_openai.errors` (OpenAI's error codes).
"""
