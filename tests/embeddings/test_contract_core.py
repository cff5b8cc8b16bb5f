"""The embedding contract: neutral types, the provider's two styles, rt.embed / rt.aembed."""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import struct
from typing import Any

import pytest
from llmport import Embeddings, Runtime, hookimpl
from llmport.controls.retry import Backoff
from llmport.errors import (
    ContentError,
    InputError,
    MalformedResponseError,
    OptionError,
    UnsupportedContentError,
    UnsupportedFeatureError,
)
from llmport.messages.embeddings import EmbedRequest, EmbedResponse
from llmport.messages.types import ModelCapabilities, Usage
from llmport.provider.contract import Provider, ProviderInfo
from llmport.provider.embedding import EMBEDDINGS
from support.embed_helpers import DIMS, EMBED_CAPS, TableEmbedder, TablePlugin, embed, vector_of
from support.media_samples import PNG

# -- neutral types ---------------------------------------------------------------


def test_embed_request_round_trips_through_json() -> None:
    request = EmbedRequest("m", ("a", "b"), "query", 256, "end", {"user": "u1"})
    assert EmbedRequest.from_dict(json.loads(json.dumps(request.to_dict()))) == request
    assert EmbedRequest.from_dict({"model": "m", "inputs": ["x"]}) == EmbedRequest("m", ("x",))


def test_from_rows_packs_little_endian_float32_in_order() -> None:
    answer = EmbedResponse.from_rows([[1.0, 2.0], [3.0, 4.5]], expected=2, model="m")
    assert answer.data == struct.pack("<4f", 1.0, 2.0, 3.0, 4.5)
    assert (answer.count, answer.dimensions) == (2, 2)
    assert answer.rows() == [(1.0, 2.0), (3.0, 4.5)]


def test_from_rows_takes_any_sized_rows_of_numbers() -> None:
    from array import array

    answer = EmbedResponse.from_rows([(1.0, 2.0), array("d", [3.0, 4.0])], expected=2)
    assert answer.rows() == [(1.0, 2.0), (3.0, 4.0)]
    with pytest.raises(MalformedResponseError, match="not a list of numbers"):
        EmbedResponse.from_rows(["ab", "cd"], expected=2)


def test_from_base64_decodes_without_float_lists() -> None:
    rows = [struct.pack("<3f", 1.0, -2.0, 0.5), struct.pack("<3f", 0.0, 0.25, 8.0)]
    answer = EmbedResponse.from_base64([base64.b64encode(r).decode() for r in rows], expected=2)
    assert answer.data == b"".join(rows)
    assert answer.dimensions == 3


@pytest.mark.parametrize(
    ("rows", "expected", "problem"),
    [
        ([[1.0, 2.0]], 2, "1 vectors for 2 inputs"),
        ([[1.0, 2.0], [1.0]], 2, "differ in length"),
        ([[1.0, math.nan]], 1, "not finite"),
        ([[1.0, math.inf]], 1, "not finite"),
        ([[1.0, 1e40]], 1, "not finite"),  # over float32's range
        ([[]], 1, "empty"),
        ([["a", "b"]], 1, "other than numbers"),
        ([], 1, "0 vectors for 1 inputs"),
    ],
)
def test_from_rows_refuses_a_malformed_answer(
    rows: list[list[Any]], expected: int, problem: str
) -> None:
    with pytest.raises(MalformedResponseError, match=problem):
        EmbedResponse.from_rows(rows, expected=expected)


def test_from_base64_refuses_unequal_rows_nan_and_garbage() -> None:
    one, two = struct.pack("<2f", 1.0, 2.0), struct.pack("<3f", 1.0, 2.0, 3.0)
    b64 = [base64.b64encode(x).decode() for x in (one, two)]
    with pytest.raises(MalformedResponseError, match="differ in length"):
        EmbedResponse.from_base64(b64)
    nan = base64.b64encode(struct.pack("<2f", 1.0, math.nan)).decode()
    with pytest.raises(MalformedResponseError, match="not finite"):
        EmbedResponse.from_base64([nan])
    with pytest.raises(MalformedResponseError, match="float32"):
        EmbedResponse.from_base64([base64.b64encode(b"abc").decode()])


def test_embeddings_reads_rows_iterates_and_round_trips() -> None:
    answer = EmbedResponse.from_rows([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    result = Embeddings(answer.data, 3, 2, "m", Usage(input_tokens=7))
    assert len(result) == 3
    assert result[1] == (3.0, 4.0) and result[-1] == (5.0, 6.0)
    assert list(result) == [(1.0, 2.0), (3.0, 4.0), (5.0, 6.0)]
    assert result[0:2] == [(1.0, 2.0), (3.0, 4.0)]
    with pytest.raises(IndexError):
        result[3]
    back = Embeddings.from_dict(json.loads(json.dumps(result.to_dict())))
    assert list(back) == list(result) and back.model == "m" and back.usage.input_tokens == 7


def test_embeddings_numpy_shares_the_buffer() -> None:
    try:  # numpy is optional: without it, .numpy() says how to get it
        import numpy as np
    except ImportError:
        result = Embeddings(struct.pack("<2f", 1.0, 2.0), 1, 2)
        with pytest.raises(ImportError, match="pip install numpy"):
            result.numpy()
        return
    result = Embeddings(bytearray(struct.pack("<4f", 1.0, 2.0, 3.0, 4.0)), 2, 2)
    array = result.numpy()
    assert array.shape == (2, 2) and array.dtype == np.float32
    assert array[1, 0] == 3.0


# -- the plain style: a third-party plugin writing _embed / _async_embed ---------


def test_plain_style_plugin_embeds_in_input_order(
    rt: Runtime, table: TablePlugin, mode: str
) -> None:
    texts = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]
    result = embed(rt, mode, texts)
    assert isinstance(result, Embeddings)
    assert len(result) == 7 and result.dimensions == DIMS and result.model == "embed"
    assert list(result) == [tuple(vector_of(t)) for t in texts]
    sent = table.providers[0].requests  # type: ignore[attr-defined]
    assert sorted(len(r.inputs) for r in sent) == [1, 3, 3]  # max_embed_inputs=3
    assert result.usage.input_tokens == sum(len(t) for t in texts)
    assert result.usage.requests == 3
    assert rt.usage.input_tokens == result.usage.input_tokens


# -- the size of an answer: held to the request by the core, whoever made it ------------


def _rows(texts: tuple[str, ...], width: int = DIMS) -> bytes:
    padded = ((vector_of(t) + [0.0] * width)[:width] for t in texts)
    return b"".join(struct.pack(f"<{width}f", *row) for row in padded)


#: A third-party plugin's wrong answers, built as it may build them (the constructor
#: alone, no check): the count of vectors, the buffer, the size.
WRONG: dict[str, Any] = {
    "a vector short": lambda r: EmbedResponse(_rows(r.inputs[:-1]), len(r.inputs) - 1, DIMS),
    "a vector too many": lambda r: EmbedResponse(
        _rows(r.inputs + r.inputs[-1:]), len(r.inputs) + 1, DIMS
    ),
    "a buffer that is not its rows": lambda r: EmbedResponse(
        _rows(r.inputs)[:-4], len(r.inputs), DIMS
    ),
    "another size than asked": lambda r: EmbedResponse(
        _rows(r.inputs, DIMS + 1), len(r.inputs), DIMS + 1
    ),
    "parts of two sizes": lambda r: (
        EmbedResponse(_rows(r.inputs, DIMS + 1), len(r.inputs), DIMS + 1)
        if r.inputs[0] == "t3"
        else EmbedResponse(_rows(r.inputs), len(r.inputs), DIMS)
    ),
}


class Wrong(TableEmbedder):
    """Answers as :data:`WRONG` says for the test's case (``mistake``)."""

    mistake = "a vector short"

    def _embed(self, request: EmbedRequest) -> EmbedResponse:
        self.requests.append(request)
        return WRONG[self.mistake](request)  # type: ignore[no-any-return]

    async def _async_embed(self, request: EmbedRequest) -> EmbedResponse:
        return self._embed(request)


class SizedTable(TablePlugin):
    """``table:embed`` taking ``dimensions=`` (any size up to :data:`DIMS`)."""

    @hookimpl
    def llmport_providers(self, register: Any) -> None:
        caps = dataclasses.replace(EMBED_CAPS, flexible_dimensions=True)
        register(ProviderInfo(prefix="table", factory=self.make, models={"embed": caps}))


@pytest.mark.parametrize("mistake", sorted(WRONG))
def test_a_wrong_size_answer_is_malformed_whichever_plugin_made_it(
    mistake: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Wrong, "mistake", mistake)
    table = SizedTable(Wrong)
    rt = Runtime(model="table:embed", hooks=[table], backoff=Backoff.none())
    texts = [f"t{i}" for i in range(7)]  # three parts: t0-t2, t3-t5, t6
    asked = {"dimensions": DIMS} if mistake == "another size than asked" else {}
    with pytest.raises(MalformedResponseError, match=r"embedding inputs? ") as caught:
        embed(rt, mode, texts, **asked)
    assert set(caught.value.embed_inputs) <= set(range(7))  # type: ignore[attr-defined]
    sent = [r for p in table.providers for r in p.requests]  # type: ignore[attr-defined]
    assert len(sent) <= 3  # not retried: the same request gets the same answer


def test_a_string_is_one_input(rt: Runtime, mode: str) -> None:
    result = embed(rt, mode, "hello")
    assert len(result) == 1 and result[0] == tuple(vector_of("hello"))


def test_input_type_reaches_the_plugin(rt: Runtime, table: TablePlugin) -> None:
    rt.embed(["q"], input_type="query")
    assert table.providers[0].requests[0].input_type == "query"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("inputs", "error", "problem"),
    [
        ("", ContentError, "empty string"),
        ([], ContentError, "empty"),
        (["ok", 3], ContentError, "content block 1: embed inputs must be strings"),
        ([b"bytes"], ContentError, "must be strings"),
        (b"bytes", ContentError, "string or a list"),
        (["ok", "   "], ContentError, "content block 1"),
        ("x" * 30_000_000, ContentError, "30,000,000 characters"),
        (["fine", "y" * 400], ContentError, r"content block 1: ~100 tokens \(estimated\)"),
        (
            [{"type": "image", "url": "https://x/y.png"}],
            UnsupportedContentError,
            "'embed' cannot take image block #0 .*: it embeds text only",
        ),
        ([["a caption", {"type": "image", "data": PNG}]], UnsupportedContentError, "text only"),
        ([{"type": "image", "media_type": "image/png", "data": b"GIF89a"}], ContentError, "gif"),
    ],
)
def test_bad_inputs_are_typed_before_any_request(
    rt: Runtime, table: TablePlugin, mode: str, inputs: Any, error: type, problem: str
) -> None:
    with pytest.raises(error, match=problem) as caught:
        embed(rt, mode, inputs)
    assert isinstance(caught.value, InputError)
    assert all(not p.requests for p in table.providers)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("kw", "problem"),
    [
        ({"input_type": "search"}, "input_type"),
        ({"truncate": "middle"}, "truncate"),
        ({"dimensions": 0}, "dimensions"),
        ({"dimensions": "8"}, "dimensions"),
        ({"deadline": -1}, "deadline"),
        ({"normalize": "yes"}, "normalize"),
    ],
)
def test_bad_options_are_typed(rt: Runtime, kw: dict[str, Any], problem: str) -> None:
    with pytest.raises(OptionError, match=problem):
        rt.embed(["x"], **kw)


def test_dimensions_refused_where_the_size_is_fixed(rt: Runtime, table: TablePlugin) -> None:
    with pytest.raises(UnsupportedFeatureError, match=r"fixed \(it always answers 4\)"):
        rt.embed(["x"], dimensions=2)
    assert all(not p.requests for p in table.providers)  # type: ignore[attr-defined]


def test_a_chat_model_refuses_embeddings_typed(rt: Runtime, mode: str) -> None:
    with pytest.raises(UnsupportedFeatureError) as caught:
        embed(rt, mode, ["x"], model="table:chat")
    assert caught.value.feature == EMBEDDINGS


def test_a_provider_without_embeddings_refuses_naming_its_hint() -> None:
    class Chatty(Provider):
        name = "chatty"
        embeddings_hint = "use voyage: instead"

    class Plugin:
        from llmport import hookimpl

        @hookimpl
        def llmport_providers(self, register: Any) -> None:
            register(ProviderInfo(prefix="chatty", factory=Chatty))

    rt = Runtime(hooks=[Plugin()])
    with pytest.raises(UnsupportedFeatureError, match="use voyage: instead"):
        rt.embed(["x"], model="chatty:any")


# -- the prepare/send style ------------------------------------------------------


class PreparedEmbedder(Provider):
    """prepare_embed converts once; send_embed is the I/O, once per attempt."""

    name = "prep"

    def __init__(self, settings: Any = None, info: ProviderInfo | None = None) -> None:
        super().__init__(settings, info)
        self.prepared = 0
        self.sent: list[Any] = []

    def prepare_embed(self, request: EmbedRequest) -> Any:
        prepared = super().prepare_embed(request)
        self.prepared += 1
        prepared.payload = {"input": list(prepared.request.inputs)}
        return prepared

    def send_embed(self, prepared: Any) -> EmbedResponse:
        self.sent.append(prepared.payload)
        rows = [[float(len(t)), 0.0] for t in prepared.payload["input"]]
        return EmbedResponse.from_rows(rows, usage=Usage(input_tokens=1, requests=1))


def test_prepare_send_style_converts_once_per_part(mode: str) -> None:
    made: list[PreparedEmbedder] = []

    class Plugin:
        from llmport import hookimpl

        @hookimpl
        def llmport_providers(self, register: Any) -> None:
            caps = ModelCapabilities(embeddings=True, max_embed_inputs=2)
            register(
                ProviderInfo(
                    prefix="prep",
                    factory=lambda settings, info: (
                        made.append(PreparedEmbedder(settings, info)) or made[-1]
                    ),
                    models={"*": caps},
                )
            )

    rt = Runtime(hooks=[Plugin()])
    result = embed(rt, mode, ["a", "bb", "ccc"], model="prep:e")
    assert [row[0] for row in result] == [1.0, 2.0, 3.0]
    assert made[0].prepared == 2
    assert sorted(p["input"] for p in made[0].sent) == [["a", "bb"], ["ccc"]]
    assert result.usage.input_tokens == 2
