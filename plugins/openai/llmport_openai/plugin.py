"""Entry point of the openai plugin: registers nothing until the provider lands."""
