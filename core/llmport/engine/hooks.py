"""The policy and observe hooks of one run.

Request and response guardrails chain: each hookimpl sees what the previous
one returned (pluggy's order: last registered first), so they are called one
by one with only the arguments each declares, as pluggy would. A hookimpl
marked ``wrapper=True`` wraps the whole chain the pluggy way: it runs up to
its ``yield``, receives the chain's result and returns the final one.
Observers are called one by one too, wrappers around them: one that raises
is logged and the others still run, so an observer never breaks a run.
Nothing is built for observers when none is registered.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..errors import GuardrailTripped, InputGuardrailTripped, OutputGuardrailTripped
from ..messages.types import Request, Response
from ..observe.logs import logger
from ..plugins.host import PluginHost
from ..tools.policy import CallInfo, ToolCheck, combine_verdicts

__all__ = ["RunHooks"]

T = TypeVar("T")


def _call_impl(impl: Any, **kwargs: Any) -> Any:
    """Call one pluggy hookimpl as pluggy would: with only the arguments it declares."""
    return impl.function(*(kwargs[name] for name in impl.argnames))


def _chain(impls: list[Any], value: T, kind: type[T], stage: str, **kwargs: Any) -> T:
    """Pass ``value`` through ``impls`` in turn; each may return a replacement (or None).

    Wrapper impls (``hookimpl(wrapper=True)``) run around the plain ones, as in pluggy.
    A :class:`GuardrailTripped` a hook raises reaches the caller as the stage's
    subclass (:class:`InputGuardrailTripped` / :class:`OutputGuardrailTripped`).
    """
    if not impls:
        return value
    wrappers = [i for i in impls if getattr(i, "wrapper", False)]
    if wrappers:
        plain = [i for i in impls if not getattr(i, "wrapper", False)]
        name = "request" if stage == "input" else "response"
        started = [_call_impl(w, **{**kwargs, name: value}) for w in wrappers]
        for gen in started:
            next(gen)  # up to the wrapper's yield
        try:
            result = _chain(plain, value, kind, stage, **kwargs)
        except BaseException as exc:
            for gen in reversed(started):
                try:
                    gen.throw(exc)
                except StopIteration as stop:  # the wrapper swallowed it and returned
                    return stop.value if stop.value is not None else value
            raise
        for gen in reversed(started):
            try:
                gen.send(result)
            except StopIteration as stop:
                if stop.value is not None:
                    result = stop.value
            else:
                raise RuntimeError(f"hook wrapper {gen!r} yielded twice")
        return result
    name = "request" if stage == "input" else "response"
    tripped = InputGuardrailTripped if stage == "input" else OutputGuardrailTripped
    for impl in impls:
        try:
            new = _call_impl(impl, **{**kwargs, name: value})
        except GuardrailTripped as exc:
            if isinstance(exc, tripped):
                raise
            error = tripped(str(exc), guardrail=exc.guardrail, stage=exc.stage or stage)
            raise error from exc
        if new is None:
            continue
        if not isinstance(new, kind):
            raise tripped(
                f"{'before_request' if stage == 'input' else 'after_response'} hook "
                f"{impl.plugin_name} returned {type(new).__name__}",
                guardrail=impl.plugin_name,
                stage=stage,
            )
        value = new
    return value


class RunHooks:
    """The hooks a run calls, looked up once per run."""

    __slots__ = ("_after", "_before", "_observe", "_observers", "_policy", "host", "observed")

    def __init__(self, host: PluginHost) -> None:
        hook = host.hook
        self.host = host
        self._before = list(reversed(hook.llmport_before_request.get_hookimpls()))
        self._after = list(reversed(hook.llmport_after_response.get_hookimpls()))
        impls = list(reversed(hook.llmport_observe.get_hookimpls()))
        self._observers = impls
        self._observe = [i for i in impls if getattr(i, "wrapper", False)] if impls else []
        self._policy = hook.llmport_tool_policy
        #: Whether any observer is registered (payloads are built only then).
        self.observed = bool(impls)

    def before_request(self, request: Request, info: CallInfo) -> Request:
        """The request after every input guardrail (each may replace it)."""
        return _chain(self._before, request, Request, "input", request=request, info=info)

    def after_response(self, request: Request, response: Response, info: CallInfo) -> Response:
        """The response after every output guardrail (each may replace it)."""
        return _chain(
            self._after, response, Response, "output", request=request, response=response, info=info
        )

    def observe(self, event: str, payload: dict[str, Any], info: CallInfo) -> None:
        started = []
        for wrapper in self._observe:  # pluggy's wrapper protocol: up to the yield
            try:
                gen = _call_impl(wrapper, event=event, payload=payload, info=info)
                next(gen)
                started.append((wrapper, gen))
            except Exception:
                logger().exception("observer %s failed on %s", wrapper.plugin_name, event)
        for impl in self._observers:
            if getattr(impl, "wrapper", False):
                continue
            try:
                _call_impl(impl, event=event, payload=payload, info=info)
            except Exception:
                logger().exception("observer %s failed on %s", impl.plugin_name, event)
        for wrapper, gen in reversed(started):
            try:
                gen.send(None)
            except StopIteration:
                pass
            except Exception:
                logger().exception("observer %s failed on %s", wrapper.plugin_name, event)

    def tool_verdict(self, check: ToolCheck) -> str:
        """The combined verdict of the tool-policy hooks (allow when none answers)."""
        if not self._policy.get_hookimpls():
            return "allow"
        return combine_verdicts(self._policy(check=check))
