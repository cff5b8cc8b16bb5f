"""llmport provider plugin for gemini."""
