"""What llmport lets you see, and what it keeps hidden.

Tracing data for tracing plugins (:mod:`.tracing`), the ``llmport`` logger
(:mod:`.logs`), the one redactor every secret passes (:mod:`.redaction`) and
prices (:mod:`.prices`).
"""
