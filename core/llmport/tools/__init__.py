"""Tools: what the model may call, and how one turn of calls runs.

:class:`~llmport.Tool`, toolsets and handoffs (:mod:`.tool`), the run context
injected into tools (:mod:`.context`), handoff input filters (:mod:`.filters`)
and the data handed to tool-policy hooks (:mod:`.policy`).
"""
