"""Entry point of the anthropic plugin: registers nothing until the provider lands."""
