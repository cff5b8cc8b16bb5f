"""llmport provider plugin for Google Gemini (``google-genai``).

Install ``llmport-gemini`` and use ``Runtime(model="gemini:gemini-2.5-flash")``
(or the aliases ``gemini-flash``, ``gemini-pro``). See docs/providers/gemini.md.
"""
