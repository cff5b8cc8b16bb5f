"""What a model must answer with.

Structured output (:mod:`.structured`): ``response_format`` normalised,
checked and validated; decisions (:mod:`.decisions`): one of ``choices``.
"""
