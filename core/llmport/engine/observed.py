"""How a call that is not a chat run is reported: observe hooks, usage, the DAG node.

Embeddings (:mod:`.embed`) and images (:mod:`.images`) report the same way:
a ``<kind>_start`` event when the call is planned, then the runtime's usage,
the session DAG node (inside an ``@agentic_function``) and a ``<kind>_end``
event with the usage, the node and any error. :class:`ObservedCall` holds
that sequence once; each kind says what its events carry and how its node
is recorded.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..messages.types import Usage
from ..sessions.dag import current_frame
from ..tools.policy import CallInfo
from .hooks import RunHooks

__all__ = ["ObservedCall"]


class ObservedCall:
    """One call as the observers, the runtime's usage and the session DAG see it.

    ``settings`` has ``plugins`` and ``add_usage`` (the runtime); ``plan`` has
    ``qualified`` (``"prefix:model"``) and ``provider``.
    """

    __slots__ = ("hooks", "info", "plan", "settings")

    #: The events' prefix: ``"embed"`` gives ``embed_start`` / ``embed_end``.
    kind: ClassVar[str]

    def __init__(self, settings: Any, plan: Any) -> None:
        self.settings = settings
        self.plan = plan
        hooks = RunHooks(settings.plugins)
        self.hooks = hooks if hooks.observed else None
        frame = current_frame()  # inside an @agentic_function: its name and node
        self.info = CallInfo(
            model=plan.qualified,
            provider=plan.provider.name,
            function=frame.name if frame is not None else None,
            node_id=frame.node_id if frame is not None else None,
        )
        if self.hooks is not None:
            self.hooks.observe(f"{self.kind}_start", self._payload(), self.info)

    def _payload(self) -> dict[str, Any]:
        """What both events carry about the call (its model, its size)."""
        raise NotImplementedError

    def _report(
        self, usage: Usage, node: Any, ended: dict[str, Any], error: BaseException | None
    ) -> None:
        """Count ``usage`` on the runtime and send the end event (``ended`` added to it)."""
        self.settings.add_usage(usage)
        if self.hooks is not None:
            payload = {**self._payload(), "usage": usage, **ended, "node": node}
            if error is not None:
                payload["error"] = error
            self.hooks.observe(f"{self.kind}_end", payload, self.info)
