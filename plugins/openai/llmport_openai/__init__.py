"""llmport provider plugin for OpenAI: Chat Completions and the Responses API.

Prefixes: ``openai:`` (Chat Completions) and ``openai-responses:`` (Responses).

Importing this package imports nothing from the ``openai`` SDK; see
:mod:`llmport_openai.plugin` for the registration and
:mod:`llmport_openai.provider` for the settings.
"""
