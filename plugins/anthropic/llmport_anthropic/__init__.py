"""llmport provider plugin for anthropic (work in progress)."""
