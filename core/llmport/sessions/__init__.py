"""Sessions: the DAG of ``@agentic_function`` calls and where it is kept.

The DAG and its read rules (:mod:`.dag`), ``@agentic_function`` (:mod:`.agentic`),
:class:`~llmport.Session` (:mod:`.session`), the session stores chosen by URL
(:mod:`.stores`, the embedded SQLite one in :mod:`.sqlite`), the media they keep once
per hash (:mod:`.attachments`) and the run context's
key-value store (:mod:`.kv`), and the seam a durable-execution plugin wraps
around each model request, tool call and DAG write (:mod:`.durable`).
"""
