"""Example tool-source plugin (filled in by the tools work)."""
