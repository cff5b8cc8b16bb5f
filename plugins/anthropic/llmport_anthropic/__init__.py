"""llmport provider plugin for Anthropic's Messages API (Claude).

Install ``llmport-anthropic`` and use ``Runtime(model="anthropic:claude-sonnet-4-5")``
(or the aliases ``sonnet``, ``haiku``, ``opus``). See docs/providers/anthropic.md.
"""
