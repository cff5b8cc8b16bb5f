"""Entry point of the bedrock plugin."""
