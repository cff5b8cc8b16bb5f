"""Run controls: the options of a call and what bounds it.

Options declared once and checked (:mod:`.options`), retries with backoff
(:mod:`.retry`), client-side rate limits (:mod:`.limits`), token/cost budgets
(:mod:`.budget`) and context-window policies (:mod:`.window`).
"""
