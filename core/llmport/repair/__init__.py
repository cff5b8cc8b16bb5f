"""Model-proposed repairs of agentic functions: :func:`fix` and :func:`async_fix`.

What this subpackage owns: asking the model for a new version of an
``@agentic_function`` that keeps failing (:mod:`.prompt`), checking the
proposal without running it (:mod:`.checks`), and the flow around them
(:mod:`.fix`): the diff, the approval, compiling and installing the
approved source, the ``fix`` node of the session DAG and writing the
source file back. Model-written code never runs before approval.
"""

from __future__ import annotations

from .fix import async_fix, fix

__all__ = ["async_fix", "fix"]
