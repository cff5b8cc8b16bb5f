"""Entry point of the gemini plugin."""
