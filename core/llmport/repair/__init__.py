"""Model-proposed repairs of agentic functions: ``llmport.fix`` and ``llmport.async_fix``.

What this subpackage owns: asking the model for a new version of an
``@agentic_function`` that keeps failing (:mod:`.prompt`), checking the
proposal without running it (:mod:`.checks`; the characters an approver
could not see: :mod:`.hidden`), and the flow around them (:mod:`.fix`):
the diff, the approval, compiling and installing the approved source, the
``fix`` node of the session DAG and writing the source file back exactly as
it was read (:mod:`.source_file`). Model-written code never runs before
approval.

The two functions live in :mod:`llmport.repair.fix` and are not re-exported
here, so that ``llmport.repair.fix`` keeps naming the module.
"""
