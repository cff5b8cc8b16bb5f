"""llmport provider plugin for bedrock."""
