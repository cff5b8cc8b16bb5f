"""llmport provider plugin for openai (work in progress)."""
