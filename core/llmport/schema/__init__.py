"""JSON schemas: built from Python functions and types, and adapted to each vendor.

:mod:`.build` reads type hints and docstrings into JSON Schema; the vendor
schema transformers every plugin shares live here too, so no plugin keeps a copy.
"""
