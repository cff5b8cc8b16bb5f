"""The provider boundary: the contract every vendor plugin implements, and what it shares.

The :class:`~llmport.provider.contract.Provider` contract (:mod:`.contract`),
stream assembly (:mod:`.assembly`), the media checks against a model's
capabilities (:mod:`.media`), the ``Runtime(call=fn)`` adapter (:mod:`.callable`), request
bodies serialized once (:mod:`.wire`), cached SDK clients (:mod:`.clients`),
vendor errors to llmport errors (:mod:`.translate`), thinking budgets
(:mod:`.thinking`), model routing (:mod:`.routing`) and configuration
(:mod:`.config`).
"""
