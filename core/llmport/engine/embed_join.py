"""Joining an embed call's answers: one float32 buffer, input order, one usage.

:class:`Joiner` holds each part's answer to what was asked (:func:`wrong_size`:
one vector per input, the ``dimensions=`` asked, the same size as the other
parts' and the cache's), writes its vectors at its inputs' rows as soon as the
part answers (cached vectors first), keeps new vectors in the cache, and sums
the priced usage; :func:`normalize_rows` scales rows to unit length in place.
A wrong-size answer is a :class:`~llmport.errors.MalformedResponseError`
whichever plugin made it (plugins do not check sizes: this is the one place).
Nothing here does I/O but the cache's writes.
"""

from __future__ import annotations

import math
from array import array

from ..errors import MalformedResponseError
from ..messages.embeddings import Embeddings, EmbedResponse, float32_rows
from ..messages.types import Usage
from .embed_plan import EmbedPlan, Part, priced_usage

__all__ = ["Joiner", "normalize_rows", "wrong_size"]


class Joiner:
    """Writes each part's vectors at its inputs' rows in one buffer; sums the usage."""

    __slots__ = ("buffer", "count", "dimensions", "model", "plan", "usage")

    def __init__(self, plan: EmbedPlan) -> None:
        self.plan = plan
        self.count = plan.count
        self.buffer: bytearray | None = None
        self.dimensions = 0
        self.model = plan.model
        self.usage = Usage()
        if plan.cached:
            first = next(iter(plan.cached.values()))
            self._allocate(len(first) // 4)
            for index, vector in plan.cached.items():
                self._place(index, vector)

    def _allocate(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.buffer = bytearray(self.count * dimensions * 4)

    def _place(self, index: int, vector: bytes | memoryview) -> None:
        row = self.dimensions * 4
        if len(vector) != row:  # a cached vector kept at another size
            raise self._malformed(
                f"input {index} came back with {len(vector) // 4} dimensions, "
                f"the others with {self.dimensions}"
            )
        assert self.buffer is not None
        self.buffer[index * row : (index + 1) * row] = vector

    def _malformed(self, problem: str) -> MalformedResponseError:
        # Not retried: the same request gets the same answer.
        return MalformedResponseError(
            f"embedding answer: {problem}", provider=self.plan.provider.name, retryable=False
        )

    def add(self, part: Part, answer: EmbedResponse) -> None:
        """Place ``answer`` (the vectors of ``part``) in the buffer; keep them in the cache.

        Raises :class:`MalformedResponseError` when its size is not what was asked.
        """
        problem = wrong_size(answer, len(part.rows), part.prepared.request.dimensions)
        if problem is None and self.buffer is not None and answer.dimensions != self.dimensions:
            problem = f"{answer.dimensions} dimensions, the others {self.dimensions}"
        if problem is not None:
            raise self._malformed(problem)
        if self.buffer is None:
            self._allocate(answer.dimensions)
            self.model = answer.model or self.model
        assert self.buffer is not None
        row = self.dimensions * 4
        rows = part.rows
        if isinstance(rows, range) and rows.step == 1:
            self.buffer[rows.start * row : rows.stop * row] = answer.data
        else:
            data = memoryview(answer.data)
            for k, index in enumerate(rows):
                self._place(index, data[k * row : (k + 1) * row])
        self.usage.add(priced_usage(self.plan, answer))
        self._keep(part, answer.data, row)

    def _keep(self, part: Part, data: bytes | bytearray, row: int) -> None:
        plan = self.plan
        if plan.cache is None:
            return
        keys = (plan.hashes[index] for index in part.rows)
        plan.cache.keep(
            plan.namespace, ((key, data[k * row : (k + 1) * row]) for k, key in enumerate(keys))
        )

    def result(self) -> Embeddings:
        assert self.buffer is not None  # every call has at least one input
        if self.plan.normalize:
            normalize_rows(self.buffer, self.dimensions)
        return Embeddings(self.buffer, self.count, self.dimensions, self.model, self.usage)


def wrong_size(answer: EmbedResponse, inputs: int, asked: int | None) -> str | None:
    """What is wrong with the size of ``answer`` to ``inputs`` inputs and ``dimensions=asked``
    (None: nothing): a count of vectors, a buffer that is not ``count`` rows, a size not asked."""
    if answer.count != inputs:
        return f"{answer.count} vectors for {inputs} inputs"
    if answer.dimensions < 1 or len(answer.data) != answer.count * answer.dimensions * 4:
        return f"{len(answer.data)} bytes are not {answer.count} vectors of {answer.dimensions}"
    if asked is not None and answer.dimensions != asked:
        return f"vectors of {answer.dimensions} values for dimensions={asked}"
    return None


def normalize_rows(buffer: bytearray, dimensions: int) -> None:
    """Scale every float32 row of ``buffer`` to unit length (L2), in place."""
    values = float32_rows(buffer)
    for start in range(0, len(values), dimensions):
        row = values[start : start + dimensions]
        norm = math.hypot(*row)
        if norm > 0:
            scaled = array("f", [v / norm for v in row]).tobytes()
            buffer[start * 4 : (start + dimensions) * 4] = scaled
