"""The provider boundary: the contract every vendor plugin implements, and what it shares.

The :class:`~llmport.provider.contract.Provider` contract and stream assembly
(:mod:`.contract`), the ``Runtime(call=fn)`` adapter (:mod:`.callable`), request
bodies serialized once (:mod:`.wire`), cached SDK clients (:mod:`.clients`),
vendor errors to llmport errors (:mod:`.translate`), thinking budgets
(:mod:`.thinking`), model routing (:mod:`.routing`) and configuration
(:mod:`.config`).
"""
