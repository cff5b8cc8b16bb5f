"""``rt.generate_image`` / ``rt.agenerate_image``: plan, send, report.

The call is planned once (:mod:`.image_plan`: options checked, the model
routed and the request prepared, so a bad input fails typed before any
request), then runs the step machine of :mod:`.request_steps` (capacity,
send, retry pause, budget) that embed parts run: with blocking calls for
:func:`generate_image`, with awaits for :func:`agenerate_image`.
``deadline=`` bounds the whole and ``Runtime(timeout=)`` each attempt.

Every call is reported (:class:`Observed`): the runtime's usage, the observe
hooks (``image_start`` / ``image_end``: OpenTelemetry's ``generate_content``
span) and, inside an ``@agentic_function``, an ``image`` node in the session
DAG (:func:`~llmport.sessions.agentic.record_image`).
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from ..messages.images import ImageResponse, Images
from ..messages.types import Usage
from .image_plan import ImagePlan, plan_image
from .observed import ObservedCall
from .request_steps import arun_part, run_part
from .settings import RunSettings

__all__ = ["Observed", "agenerate_image", "generate_image"]


def generate_image(settings: RunSettings, prompt: Any, **options: Any) -> Images:
    """Plan, send with retries under the runtime's limits, report (module docstring)."""
    plan = plan_image(settings, prompt, **options)
    call = Observed(settings, plan)
    try:
        answer: ImageResponse = run_part(plan, plan.part)
    except BaseException as exc:
        call.failed(exc)
        raise
    return call.done(answer)


async def agenerate_image(settings: RunSettings, prompt: Any, **options: Any) -> Images:
    """Async :func:`generate_image`: the same plan and machine, awaited."""
    plan = plan_image(settings, prompt, **options)
    call = Observed(settings, plan)
    try:
        answer: ImageResponse = await arun_part(plan, plan.part)
    except BaseException as exc:
        call.failed(exc)
        raise
    return call.done(answer)


class Observed(ObservedCall):
    """One image call as the observers, the runtime's usage and the session DAG see it."""

    __slots__ = ()
    kind = "image"
    plan: ImagePlan

    def _payload(self) -> dict[str, Any]:
        request = self.plan.request
        return {"model": self.plan.model, "n": request.n, "size": request.size}

    def done(self, answer: ImageResponse) -> Images:
        usage = self.plan.priced(answer)
        self._finish(usage, answer, None)
        return Images(answer.images, self.plan.qualified, usage)

    def failed(self, error: BaseException) -> None:
        self._finish(Usage(), None, error)

    def _finish(
        self, usage: Usage, answer: ImageResponse | None, error: BaseException | None
    ) -> None:
        from ..sessions.agentic import record_image

        plan = self.plan
        images = [] if answer is None else [_described(block) for block in answer.images]
        node = record_image(
            model=plan.qualified,
            prompt_hash=hashlib.sha256(plan.request.prompt.encode()).hexdigest(),
            n=plan.request.n,
            usage=usage,
            images=images,
            duration=time.monotonic() - plan.started,
            error=error,
        )
        self._report(usage, node, {"images": len(images)}, error)


def _described(block: Any) -> dict[str, Any]:
    """An image as the DAG keeps it: media type, size and hash, never the bytes."""
    data = block.data or b""
    return {
        "media_type": block.media_type,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
