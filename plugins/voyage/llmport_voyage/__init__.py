"""llmport provider plugin for Voyage AI's embeddings (``POST /v1/embeddings`` over httpx2).

Install ``llmport-voyage``, set ``VOYAGE_API_KEY`` and call
``Runtime().embed(texts, model="voyage:voyage-3.5")``. See docs/embeddings.md.
"""
