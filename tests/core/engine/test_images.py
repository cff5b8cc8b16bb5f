"""rt.generate_image / rt.agenerate_image: the neutral types, both plugin styles, the engine.

A third-party plugin (``canvas``) generates in the plain style (``_generate_image``
only) or the fast one (``prepare_image`` + ``send_image``); its model table says
what ``canvas:paint`` takes. Each behaviour runs sync and async.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from llmport import Runtime, Session, agentic_function, hookimpl
from llmport.controls.retry import Backoff
from llmport.errors import (
    ContentError,
    InputError,
    MalformedResponseError,
    OptionError,
    OverloadedError,
    RunTimeout,
    UnsupportedFeatureError,
)
from llmport.messages.images import ImageRequest, ImageResponse, Images
from llmport.messages.types import ImageGeneration, MediaBlock, ModelCapabilities, Usage
from llmport.observe.redaction import isolated_secrets, register_secret
from llmport.provider.contract import Provider, ProviderInfo
from llmport.provider.imaging import IMAGES, PreparedImage, aspect_ratio
from llmport.testing.scripted import scripted_png

PNG = scripted_png("canvas")
LIMITS = ImageGeneration(
    max_images=3,
    sizes=frozenset({"256x256", "512x512"}),
    qualities=frozenset({"high"}),
    formats=frozenset({"png", "jpeg"}),
    max_seed=100,
    max_prompt_chars=50,
)


class Canvas(Provider):
    """A plain-style image plugin: ``_generate_image`` / ``_async_generate_image`` only."""

    name = "canvas"

    def __init__(self, settings: Any = None, info: ProviderInfo | None = None) -> None:
        super().__init__(settings, info)
        self.requests: list[ImageRequest] = []
        self.answers: list[Callable[[ImageRequest], ImageResponse]] = []

    def _answer(self, request: ImageRequest) -> ImageResponse:
        self.requests.append(request)
        if self.answers:
            return self.answers.pop(0)(request)
        images = tuple(MediaBlock("image", "image/png", data=PNG) for _ in range(request.n))
        return ImageResponse(images, Usage(input_tokens=7, output_tokens=100), request.model)

    def _generate_image(self, request: ImageRequest) -> ImageResponse:
        return self._answer(request)

    async def _async_generate_image(self, request: ImageRequest) -> ImageResponse:
        return await asyncio.to_thread(self._answer, request)  # a stalled answer stalls here


class FastCanvas(Canvas):
    """The prepare/send style: the body built once, resent by every attempt."""

    def __init__(self, settings: Any = None, info: ProviderInfo | None = None) -> None:
        super().__init__(settings, info)
        self.prepared: list[PreparedImage] = []

    def prepare_image(self, request: ImageRequest) -> PreparedImage:
        prepared = super().prepare_image(request)
        prepared.payload = json.dumps(request.to_dict())
        self.prepared.append(prepared)
        return prepared

    def send_image(self, prepared: PreparedImage) -> ImageResponse:
        return self._answer(ImageRequest.from_dict(json.loads(prepared.payload)))


class Plugin:
    def __init__(self, factory: Callable[..., Canvas] = Canvas) -> None:
        self.factory = factory
        self.providers: list[Canvas] = []

    def make(self, settings: Any = None, info: ProviderInfo | None = None) -> Canvas:
        provider = self.factory(settings, info)
        self.providers.append(provider)
        return provider

    @hookimpl
    def llmport_providers(self, register: Callable[[ProviderInfo], None]) -> None:
        register(
            ProviderInfo(
                prefix="canvas",
                factory=self.make,
                models={"paint": ModelCapabilities(images=LIMITS), "chat": ModelCapabilities()},
            )
        )


def generate(rt: Runtime, mode: str, prompt: Any, **kw: Any) -> Images:
    if mode == "sync":
        return rt.generate_image(prompt, **kw)
    return asyncio.run(rt.agenerate_image(prompt, **kw))


MODES = ["sync", "async"]


@pytest.fixture(params=[Canvas, FastCanvas], ids=["plain", "prepare-send"])
def plugin(request: pytest.FixtureRequest) -> Plugin:
    return Plugin(request.param)


def runtime(plugin: Plugin, **kw: Any) -> Runtime:
    return Runtime(model="canvas:paint", hooks=[plugin], backoff=Backoff.none(), **kw)


# -- neutral types ---------------------------------------------------------------


def test_image_request_round_trips_through_json() -> None:
    request = ImageRequest("m", "a fox", 2, "512x512", "high", "jpeg", 7, {"style": "vivid"})
    assert ImageRequest.from_dict(json.loads(json.dumps(request.to_dict()))) == request
    assert request.dimensions == (512, 512)
    with pytest.raises(InputError):
        ImageRequest.from_dict({"model": "m"})


def test_aspect_ratio_reduces_the_size() -> None:
    assert aspect_ratio("1792x1024") == "7:4"
    assert aspect_ratio("1024x1024") == "1:1"


# -- both styles, sync and async --------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_images_come_back_with_usage_and_the_options_reach_the_plugin(
    plugin: Plugin, mode: str
) -> None:
    rt = runtime(plugin)
    images = generate(
        rt,
        mode,
        "a fox",
        n=2,
        size="256x256",
        quality="high",
        output_format="png",
        seed=5,
        vendor={"canvas": {"style": "vivid"}, "other": {"x": 1}},
    )
    assert len(images) == 2 and [b.media_type for b in images] == ["image/png"] * 2
    assert images[0].data == PNG and images.model == "canvas:paint"
    assert (images.usage.input_tokens, images.usage.output_tokens, images.usage.requests) == (
        7,
        100,
        1,
    )
    assert rt.usage.output_tokens == 100  # the runtime's total counts it
    (sent,) = plugin.providers[0].requests
    assert (sent.prompt, sent.n, sent.size, sent.quality, sent.seed) == (
        "a fox",
        2,
        "256x256",
        "high",
        5,
    )
    assert dict(sent.options) == {"style": "vivid"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"prompt": ""}, ContentError, "empty prompt"),
        ({"prompt": 42}, ContentError, "must be a string"),
        ({"prompt": "x" * 51}, ContentError, "at most 50"),
        ({"n": 0}, OptionError, "n must be"),
        ({"n": 1.0}, OptionError, "n must be"),
        ({"n": 4}, UnsupportedFeatureError, "at most 3 images"),
        ({"size": "1024"}, OptionError, "WIDTHxHEIGHT"),
        ({"size": (256, 256)}, OptionError, "WIDTHxHEIGHT"),
        ({"size": "1024x1024"}, UnsupportedFeatureError, "offered: 256x256, 512x512"),
        ({"quality": "ultra"}, OptionError, "quality"),
        ({"quality": "low"}, UnsupportedFeatureError, "offered: high"),
        ({"output_format": "gif"}, OptionError, "output_format"),
        ({"output_format": "webp"}, UnsupportedFeatureError, "offered: jpeg, png"),
        ({"seed": -1}, OptionError, "seed"),
        ({"seed": 101}, UnsupportedFeatureError, "at most 100"),
        ({"deadline": 0}, OptionError, "deadline"),
        ({"vendor": ["x"]}, OptionError, "vendor"),
    ],
)
def test_bad_input_is_typed_before_any_request(
    plugin: Plugin, mode: str, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    rt = runtime(plugin)
    kwargs = dict(kwargs)
    prompt = kwargs.pop("prompt", "a fox")
    with pytest.raises(error, match=match):
        generate(rt, mode, prompt, **kwargs)
    assert all(not p.requests for p in plugin.providers)


@pytest.mark.parametrize("mode", MODES)
def test_a_model_without_an_image_endpoint_is_refused_typed(plugin: Plugin, mode: str) -> None:
    rt = runtime(plugin)
    with pytest.raises(UnsupportedFeatureError, match=IMAGES) as caught:
        generate(rt, mode, "a fox", model="canvas:chat")
    assert isinstance(caught.value, InputError)
    assert all(not p.requests for p in plugin.providers)


@pytest.mark.parametrize("mode", MODES)
def test_a_call_function_is_refused(mode: str) -> None:
    rt = Runtime(call=lambda request: "hi")
    with pytest.raises(UnsupportedFeatureError, match="only chats"):
        generate(rt, mode, "a fox")


# -- answers held to the request -----------------------------------------------------


def _answer(count: int, media_type: str = "image/png", kind: str = "image") -> Any:
    def answer(request: ImageRequest) -> ImageResponse:
        block = MediaBlock(kind, media_type, data=PNG)  # type: ignore[arg-type]
        return ImageResponse(tuple(block for _ in range(count)), Usage(), request.model)

    return answer


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("answer", "match"),
    [
        (_answer(1), "1 images for n=2"),
        (_answer(3), "3 images for n=2"),
        (_answer(2, "image/jpeg"), "asked image/png"),
        (_answer(2, "audio/wav", "audio"), "not an image"),
        (lambda request: {"data": []}, "not ImageResponse"),
    ],
)
def test_an_answer_that_is_not_what_was_asked_is_refused(
    plugin: Plugin, mode: str, answer: Any, match: str
) -> None:
    plugin.factory = _with_answers(plugin.factory, [answer])
    rt = runtime(plugin)
    with pytest.raises((MalformedResponseError, TypeError), match=match):
        generate(rt, mode, "a fox", n=2, output_format="png")
    assert len(plugin.providers[-1].requests) == 1  # a wrong answer is not paid for twice


def _with_answers(factory: Callable[..., Canvas], answers: list[Any]) -> Callable[..., Canvas]:
    def make(settings: Any = None, info: ProviderInfo | None = None) -> Canvas:
        provider = factory(settings, info)
        provider.answers.extend(answers)
        return provider

    return make


@pytest.mark.parametrize("mode", MODES)
def test_a_link_answer_keeps_its_signature_and_loses_an_echoed_key(
    plugin: Plugin, mode: str
) -> None:
    key = "sk-proj-" + secrets.token_hex(16)  # fake, random: only this test knows it
    link = f"https://cdn.example/a.png?se=2026&sig=Zm9vYmFy0123456789&echo={key}"

    def linked(request: ImageRequest) -> ImageResponse:
        return ImageResponse((MediaBlock("image", "image/png", url=link),), Usage(), request.model)

    plugin.factory = _with_answers(plugin.factory, [linked])
    with isolated_secrets():
        register_secret(key)
        (block,) = generate(runtime(plugin), mode, "a fox")
    # Any plugin's link: the caller's key masked in the core, the vendor's signature kept.
    assert block.url == "https://cdn.example/a.png?se=2026&sig=Zm9vYmFy0123456789&echo=***"


@pytest.mark.parametrize("mode", MODES)
def test_a_transient_failure_is_retried(plugin: Plugin, mode: str) -> None:
    def overloaded(request: ImageRequest) -> ImageResponse:
        raise OverloadedError("busy", provider="canvas", status=503)

    plugin.factory = _with_answers(plugin.factory, [overloaded])
    rt = runtime(plugin, max_retries=2)
    images = generate(rt, mode, "a fox")
    assert len(images) == 1 and len(plugin.providers[-1].requests) == 2


@pytest.mark.parametrize("mode", MODES)
def test_the_deadline_bounds_a_stalled_vendor(plugin: Plugin, mode: str) -> None:
    release = threading.Event()

    def stalled(request: ImageRequest) -> ImageResponse:
        release.wait(10)
        return _answer(1)(request)

    plugin.factory = _with_answers(plugin.factory, [stalled])
    rt = runtime(plugin)

    async def timed() -> float:
        started = time.monotonic()
        try:
            with pytest.raises(RunTimeout):
                await rt.agenerate_image("a fox", deadline=0.3)
            return time.monotonic() - started
        finally:
            release.set()  # before the loop closes: asyncio.run waits for its threads

    if mode == "async":
        took = asyncio.run(timed())
    else:
        started = time.monotonic()
        try:
            with pytest.raises(RunTimeout):
                rt.generate_image("a fox", deadline=0.3)
            took = time.monotonic() - started
        finally:
            release.set()
    assert took < 5  # the stalled send would take 10 s


# -- what every call reports ---------------------------------------------------------


def test_inside_an_agentic_function_the_call_is_an_image_node(tmp_path: Any) -> None:
    session = Session(tmp_path / "s.db")
    rt = runtime(Plugin())

    @agentic_function(session=session)
    def illustrate() -> int:
        return len(rt.generate_image("a secret fox", n=2))

    assert illustrate() == 2
    (node,) = [n for n in session.nodes() if n.kind == "image"]
    assert node.data["n"] == 2 and node.data["model"] == "canvas:paint"
    assert "a secret fox" not in json.dumps(node.data) + json.dumps(node.result)
    assert [i["media_type"] for i in node.result["images"]] == ["image/png"] * 2
    assert node.result["images"][0]["bytes"] == len(PNG)
    assert session.usage().output_tokens == 100


def test_observers_see_image_start_and_end() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    class Watch:
        @hookimpl
        def llmport_observe(self, event: str, payload: dict[str, Any], info: Any) -> None:
            if event.startswith("image_"):
                seen.append((event, payload))

    rt = Runtime(model="canvas:paint", hooks=[Plugin(), Watch()], backoff=Backoff.none())
    rt.generate_image("a fox", n=2, size="512x512")
    assert [event for event, _ in seen] == ["image_start", "image_end"]
    assert seen[0][1]["size"] == "512x512" and seen[1][1]["images"] == 2


# -- the runtime's budget, prices and limits ------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_budget_refuses_the_call_once_spent(mode: str) -> None:
    from llmport import Budget
    from llmport.errors import BudgetExceeded

    plugin = Plugin()
    rt = runtime(plugin, budget=Budget(output_tokens=150))
    generate(rt, mode, "a fox")  # 100 output tokens counted by the vendor
    with pytest.raises(BudgetExceeded):  # 200: over, found when the answer is charged
        generate(rt, mode, "a fox")
    with pytest.raises(BudgetExceeded):  # spent: refused before any request
        generate(rt, mode, "a fox")
    assert sum(len(p.requests) for p in plugin.providers) == 2
    assert rt.ledger is not None and rt.ledger.used.output_tokens == 200


def test_gpt_image_usage_is_priced_from_the_table() -> None:
    from llmport.observe.prices import prices_available

    usage = Usage(input_tokens=12, output_tokens=544, requests=1).priced_as("openai", "gpt-image-1")
    assert (usage.cost is not None) == prices_available()
    if usage.cost is not None:
        assert usage.cost > 0


@pytest.mark.parametrize("mode", MODES)
def test_a_limit_holds_the_call(mode: str) -> None:
    """``Limit(concurrency=1)``: three concurrent calls reach the vendor one at a time."""
    from llmport import Limit

    busy: list[int] = [0, 0]  # now, most
    lock = threading.Lock()

    def slow(request: ImageRequest) -> ImageResponse:
        with lock:
            busy[0] += 1
            busy[1] = max(busy)
        try:
            time.sleep(0.05)
            return _answer(1)(request)
        finally:
            with lock:
                busy[0] -= 1

    plugin = Plugin()
    plugin.factory = _with_answers(Canvas, [slow] * 3)
    rt = runtime(plugin, limits={"canvas:*": Limit(concurrency=1)})
    if mode == "sync":
        threads = [threading.Thread(target=rt.generate_image, args=("a fox",)) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:

        async def three() -> None:
            await asyncio.gather(*(rt.agenerate_image("a fox") for _ in range(3)))

        asyncio.run(three())
    assert busy[1] == 1 and len(plugin.providers[-1].requests) == 3
