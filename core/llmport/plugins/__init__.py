"""The plugin host.

The pluggy hook specifications (:mod:`.hookspecs`) and plugin discovery through
the ``llmport`` entry-point group (:mod:`.host`).
"""
