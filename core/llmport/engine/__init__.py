"""The engine behind :class:`~llmport.Runtime`, one room per part.

* :mod:`.plan`: everything decided before the first request (routing to a
  provider, fallbacks, budgets, limits), a frozen :class:`~.plan.RunPlan`
  with one :class:`~.plan.RunState` for what changes during the run;
  raises input errors and sends nothing. It draws on :mod:`.inputs` (each
  option checked and normalised), :mod:`.conversation` (the first
  request's messages) and :mod:`.tool_offer` (the tools offered).
* :mod:`.steps`: the run as **one** generator of effects (:mod:`.effects`),
  sync and async share it by construction; its stages have a module each:
  :mod:`.requests` (a turn's request and its cache marks), :mod:`.attempts`
  (one model request: budgets, window, retries with their backoff sleeps,
  fallbacks), :mod:`.tool_turns` (tool calls with their policy verdicts and
  approvals, handoffs) and :mod:`.output_modes` (structured output and
  decisions).
* :mod:`.drive`: two small drivers that perform the effects' I/O, one sync
  and one async, and nothing else.
* :mod:`.hooks`: the policy and observe hooks of one run, called the way
  pluggy calls them.
* :mod:`.result`: :class:`RunResult` and :class:`ToolCallRecord`.
* :mod:`.settings`: what the engine reads from its caller (the
  :class:`~.settings.RunSettings` protocol); the engine never imports
  :class:`~llmport.Runtime`, which imports it on its first call.
  :mod:`.snapshot`: the caller's settings read once per call
  (:class:`~.snapshot.RunSnapshot`), which planning reads instead of
  calling back into the runtime.
* :mod:`.targets`: a model string routed to its provider instance, made once
  per runtime; :mod:`.calls`: one call's keywords to a step machine;
  :mod:`.tokens`: token counting and model information.
* :mod:`.jobs`: work a vendor finishes on its side, polled: batches,
  background runs and the job shape they share.
* :mod:`.resources`: the runtime's methods for what lives at the vendor
  (files, server-side conversations, jobs), as small classes it inherits.

The callable provider (``Runtime(call=fn)`` and ``_call`` overrides) lives
in :mod:`llmport.provider.callable`.
"""
