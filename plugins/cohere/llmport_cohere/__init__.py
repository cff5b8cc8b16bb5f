"""llmport provider plugin for Cohere's embeddings (``POST /v2/embed`` over httpx2).

Install ``llmport-cohere``, set ``CO_API_KEY`` and call
``Runtime().embed(texts, model="cohere:embed-v4.0")``. See docs/embeddings.md.
"""
