"""``llmport.testing.cassette``: record an app's LLM traffic once, replay it offline.

::

    from llmport.testing import cassette

    with cassette("tests/cassettes/trip.yaml", record="once"):
        answer = rt.exec("Plan a trip")          # recorded the first time, replayed after

    async with cassette("tests/cassettes/trip.yaml"):
        answer = await rt.aexec("Plan a trip")

Built on vcrpy (``pip install "llmport[testing]"``), which reaches every
transport the vendor plugins use: httpx and aiohttp (the OpenAI, Anthropic
and compatible SDKs, google-genai) and urllib3 (boto3/botocore). What this
module adds: the readable format of :mod:`.cassette_format`, the matching of
:mod:`.cassette_match` with a typed error naming the JSON path that differs,
and the secret rules of :mod:`.cassette_scrub` applied on every write, with
this cassette's keys: those of the providers called inside the block
(:mod:`llmport.observe.secrets_in_use`) and the configured key variables,
not every key the process ever registered.

Streams keep when each event arrived; ``timing="recorded"`` replays them
event by event with the recorded gaps (``"scale:0.1"``: ten times faster),
``timing="none"`` (the default) all at once (:mod:`.cassette_timing`).

Record modes: ``once`` records when the file does not exist and replays
otherwise; ``new`` replays what is recorded and records what is not;
``all`` records everything again; ``none`` only replays.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import CassetteError, CassetteMismatch, CassetteSecretError
from ..observe.redaction import SECRET_ENV_VARS, Redactor
from ..observe.secrets_in_use import UsedSecrets, secrets_in_use
from .cassette_format import FORMAT_VERSION, check_stored, readable, replayable
from .cassette_match import DEFAULT_MATCH, MATCH_PARTS, canonical_body, describe, request_part
from .cassette_scrub import find_secret, scrub
from .cassette_timing import ARRIVALS_KEY, Arrivals, pacing_patches, recording_patches, replay_pace

RECORD_MODES = {"once": "once", "new": "new_episodes", "all": "all", "none": "none"}
_INSTALL = 'pip install "llmport[testing]"'


class _OpenCassette:
    """The one cassette open in this process, if any.

    vcrpy patches the HTTP clients process-wide, so a second cassette opened
    meanwhile (another thread, another asyncio task, or nested) would answer
    the first one's requests and record into the wrong file. It is refused
    instead, naming the open one. Module state on purpose: what it guards
    (the patched client classes) is module state too.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holder: cassette | None = None

    def claim(self, opening: cassette) -> None:
        with self._lock:
            holder = self._holder
            if holder is not None:
                raise CassetteError(
                    f"cannot open cassette {opening.path} while cassette {holder.path} is open "
                    f"(in {holder.opened_in}): recording patches the HTTP clients for the "
                    "whole process, so cassettes must be used one at a time"
                )
            self._holder = opening

    def release(self, closing: cassette) -> None:
        with self._lock:
            if self._holder is closing:
                self._holder = None


_OPEN = _OpenCassette()


def body_of(request: Any) -> Any:
    """A vcrpy request's body as bytes: botocore sends S3 uploads as a file, which vcrpy
    hands back as a fresh ``BytesIO`` (or iterator) on every read of ``body``."""
    return getattr(request, "body_bytes", request.body)


class ReplayMiss(BaseException):
    """A request matched nothing in a read-only cassette: carries the :class:`CassetteMismatch`.

    A BaseException so that no SDK retry loop or connection-error wrapper
    (they catch ``Exception``) turns it into a network error; the cassette
    context turns it back into the typed error when it leaves.
    """

    def __init__(self, error: CassetteMismatch) -> None:
        self.error = error
        super().__init__(str(error))


class _Serializer:
    """vcrpy's serializer for one cassette file: the readable YAML, scrubbed and checked.

    Interactions loaded from the file are remembered, so only new ones are
    scrubbed; every one is checked for a remaining secret before the file
    is written (a key pasted into the file by hand is refused, not hidden).
    """

    def __init__(self, path: Path, keys: Callable[[], Redactor]) -> None:
        self.path = path
        #: The cassette's keys as they are now (more are noted while it records).
        self.keys = keys
        self.loaded: set[str] = set()
        #: Why the file was not written (raised once vcrpy has undone its patches).
        self.refused: CassetteError | None = None

    def _fingerprint(self, stored: dict[str, Any]) -> str:
        return json.dumps(stored, sort_keys=True, default=str)

    def deserialize(self, text: str) -> dict[str, Any]:
        import yaml  # type: ignore[import-untyped]

        try:
            data = yaml.safe_load(text) or {}
            check_stored(data)
            interactions = [replayable(i, self.path) for i in data.get("interactions") or []]
        except RecursionError:
            raise CassetteError(f"cannot read cassette {self.path}: nested too deeply") from None
        except (yaml.YAMLError, KeyError, TypeError, ValueError, OSError) as exc:
            reason = " ".join(str(exc).split())[:300]  # one line: YAML errors span several
            raise CassetteError(f"cannot read cassette {self.path}: {reason}") from None
        self.loaded = {self._fingerprint(readable(i, self.path)) for i in interactions}
        return {"version": 1, "interactions": interactions}

    def serialize(self, data: dict[str, Any]) -> str:
        import yaml

        shown = [readable(interaction, self.path) for interaction in data["interactions"]]
        redactor = self.keys()
        stored = [i if self._fingerprint(i) in self.loaded else scrub(i, redactor) for i in shown]
        where = find_secret(stored, redactor, "interactions")
        if where:
            raise CassetteSecretError(where, str(self.path))
        text: str = yaml.safe_dump(
            {"version": FORMAT_VERSION, "interactions": stored},
            sort_keys=False,
            allow_unicode=True,
            width=100_000,
        )
        return text


class _Persister:
    """vcrpy's persister: the file is written only if the serializer accepts the cassette.

    A refusal is kept on the serializer rather than raised here: vcrpy saves
    before it removes its patches, and an error at that point would leave
    them in place for the rest of the process.
    """

    @staticmethod
    def load_cassette(cassette_path: str, serializer: _Serializer) -> Any:
        """The file's interactions; a file that is not UTF-8 is refused, never re-recorded.

        (vcrpy's own persister treats undecodable bytes as no cassette, and
        ``record="once"`` would then write over the file.)
        """
        from vcr.persisters.filesystem import CassetteNotFoundError  # type: ignore[import-untyped]
        from vcr.serialize import deserialize  # type: ignore[import-untyped]

        path = Path(cassette_path)
        if not path.is_file():
            raise CassetteNotFoundError()
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CassetteError(
                f"cannot read cassette {path}: not UTF-8 (byte {exc.start})"
            ) from None
        if not text.strip():
            raise CassetteNotFoundError()  # an empty file is recorded, as vcrpy does
        return deserialize(text, serializer)

    @staticmethod
    def save_cassette(cassette_path: str, cassette_dict: Any, serializer: _Serializer) -> None:
        from vcr.serialize import serialize

        try:
            text = serialize(cassette_dict, serializer)
        except CassetteError as refused:
            serializer.refused = refused
            return
        path = Path(cassette_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _where_opened() -> str:
    """The thread, and the asyncio task if any, opening a cassette (for the refusal message)."""
    where = f"thread {threading.current_thread().name!r}"
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop: a plain thread
        task = None
    return where if task is None else f"{where}, task {task.get_name()!r}"


class cassette:
    """Record or replay every LLM request made inside the block (sync or async ``with``).

    ``match`` lists what a request is matched on (:data:`MATCH_PARTS`; by
    default method, path and canonical JSON body); ``ignore`` lists volatile
    body fields as dotted paths (``metadata.user_id``, ``messages.*.id``).
    A request with no match in replay raises :class:`~llmport.CassetteMismatch`
    naming the JSON path that differs; a cassette that would still hold a
    secret raises :class:`~llmport.CassetteSecretError` and is not written.
    ``timing`` is how recorded streams replay: ``"none"`` (all at once),
    ``"recorded"`` (event by event, with the gaps they arrived with) or
    ``"scale:F"`` (the gaps times ``F``).
    One cassette is open at a time in a process: opening a second one while
    the first is open (in another thread or task) raises :class:`~llmport.CassetteError`
    naming the first.
    """

    def __init__(
        self,
        path: str | Path,
        record: str = "once",
        match: Sequence[str] = DEFAULT_MATCH,
        ignore: Sequence[str] = (),
        timing: str = "none",
    ) -> None:
        if record not in RECORD_MODES:
            raise CassetteError(f"record must be one of {sorted(RECORD_MODES)}, not {record!r}")
        unknown = [m for m in match if m not in MATCH_PARTS]
        if unknown:
            raise CassetteError(f"cannot match on {unknown}: choose from {list(MATCH_PARTS)}")
        self.path = Path(path)
        self.record = record
        self.match = tuple(match)
        self.ignore = tuple(ignore)
        #: The factor on recorded gaps when replaying streams (``None``: instant replay).
        self.pace = replay_pace(timing)
        self._patches = ExitStack()
        self._context: Any = None
        self._vcr_cassette: Any = None
        self._serializer: _Serializer | None = None
        self._noting: Any = None
        self._used: UsedSecrets | None = None
        #: Where the block was opened (named when a second cassette is refused).
        self.opened_in = ""

    # --- the vcrpy cassette --------------------------------------------------------------

    def _recorder(self) -> Any:
        try:
            import vcr  # type: ignore[import-untyped]
        except ImportError:
            raise CassetteError(f"llmport.testing.cassette needs vcrpy: {_INSTALL}") from None
        recorder = vcr.VCR(
            record_mode=RECORD_MODES[self.record],
            match_on=[f"llmport_{part}" for part in self.match],
            decode_compressed_response=True,
        )
        for part in MATCH_PARTS:
            recorder.register_matcher(f"llmport_{part}", self._matcher(part))
        self._serializer = _Serializer(self.path, self._keys)
        recorder.register_serializer("llmport", self._serializer)
        recorder.register_persister(_Persister)
        return recorder

    def _keys(self) -> Redactor:
        """This cassette's keys: what the code inside it used, and the configured variables."""
        used = self._used.snapshot() if self._used is not None else frozenset()
        configured = (os.environ.get(name) for name in SECRET_ENV_VARS)
        return Redactor([*used, *(value for value in configured if value)])

    def _matcher(self, part: str) -> Any:
        def matches(sent: Any, recorded: Any) -> None:
            if part == "body":
                mine = self._keys().redact_data(canonical_body(body_of(sent), self.ignore))
                same = mine == canonical_body(body_of(recorded), self.ignore)
            else:
                mine = request_part(part, sent.method, sent.uri)
                same = mine == request_part(part, recorded.method, recorded.uri)
            if not same:
                raise AssertionError(f"{part} differs")

        return matches

    def _watch_misses(self, recorded: Any) -> None:
        """Make a request that matches nothing in a read-only cassette raise :class:`ReplayMiss`."""
        can_play = recorded.can_play_response_for

        def can_play_or_miss(request: Any) -> Any:
            if can_play(request):
                return True
            if recorded.write_protected:
                unplayed = [
                    (r.method, r.uri, body_of(r))
                    for i, (r, _) in enumerate(recorded.data)
                    if not recorded.play_counts[i]
                ]
                message, path, was, sent = describe(
                    request.method, request.uri, body_of(request), unplayed, self.match, self.ignore
                )
                raise ReplayMiss(CassetteMismatch(f"{self.path}: {message}", path, was, sent))
            return False

        recorded.can_play_response_for = can_play_or_miss

    def _keep_arrivals(self, recorded: Any, arrivals: Arrivals) -> None:
        """Give each recorded streamed response the arrival marks of its chunks."""
        append = recorded.append

        def append_with_arrivals(request: Any, response: Any) -> None:
            marks = arrivals.take((response.get("body") or {}).get("string"))
            if marks:
                response = {**response, ARRIVALS_KEY: marks}
            append(request, response)

        recorded.append = append_with_arrivals

    def _patch_transports(self, arrivals: Arrivals) -> None:
        """The clock on the real transports, and the pacing of replayed streams if asked."""
        patches = recording_patches(arrivals)
        if self.pace is not None:
            patches += pacing_patches(self.pace)
        for patch in patches:
            self._patches.enter_context(patch)

    # --- context protocol ----------------------------------------------------------------

    def __enter__(self) -> cassette:
        recorder = self._recorder()
        self.opened_in = _where_opened()
        _OPEN.claim(self)
        try:
            self._noting = secrets_in_use()
            self._used = self._noting.__enter__()
            arrivals = Arrivals()
            self._patch_transports(arrivals)  # before vcrpy's patches: they read these
            self._context = recorder.use_cassette(str(self.path), serializer="llmport")
            self._vcr_cassette = self._context.__enter__()
        except BaseException:
            self._stop_noting()
            self._patches.close()
            _OPEN.release(self)
            raise
        self._watch_misses(self._vcr_cassette)
        self._keep_arrivals(self._vcr_cassette, arrivals)
        return self

    def _stop_noting(self) -> None:
        noting, self._noting = self._noting, None
        if noting is not None:
            noting.__exit__(None, None, None)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        context, self._context = self._context, None
        try:
            context.__exit__(kind, error, traceback)  # saves the file: the keys are still noted
        finally:
            self._stop_noting()
            self._patches.close()
            _OPEN.release(self)
        if self._serializer is not None and self._serializer.refused is not None:
            raise self._serializer.refused from None
        if isinstance(error, ReplayMiss):
            raise error.error from None

    async def __aenter__(self) -> cassette:
        return self.__enter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.__exit__(kind, error, traceback)

    # --- what was played -----------------------------------------------------------------

    @property
    def play_count(self) -> int:
        """How many requests inside the block were answered from the file."""
        return int(self._vcr_cassette.play_count) if self._vcr_cassette is not None else 0

    @property
    def interactions(self) -> int:
        """How many interactions the cassette holds (recorded and loaded)."""
        return len(self._vcr_cassette.data) if self._vcr_cassette is not None else 0
