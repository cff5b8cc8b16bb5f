"""Secrets never leave: one place that knows what a secret looks like.

Three rules, applied together by :func:`redact` (in this order):

* **values**: the configured key values themselves are masked literally,
  whatever their format (a gateway's ``LEAKcustomproxykey-...`` has no known
  shape);
* **shapes**: anything that looks like a credential (``sk-...``, ``AIza...``,
  ``AKIA...``, ``Bearer ...``, ``x-api-key: ...``, ``?key=...``, the password
  of ``scheme://user:password@host``) is masked;
* **partial echoes**: any run of 8 or more consecutive characters of a
  registered value is masked too (a vendor that echoes ``LEAKcust****cdef``
  or the last 12 characters of a key), not counting a vendor's public
  prefix (``sk-proj-``, ``AIza``), unless the run reads as a plain word
  (letters only, of one case: ``contract`` would mangle ordinary text);
  and so is a vendor's own half-masking, the start and end of a key around
  stars (``AIzaSyFA**********hijk``), when they show 8 or more of its
  characters together.

Values come from the vendors' usual environment variables (read when a
Runtime is created or a toolset is served), from the settings providers are
created with (:func:`register_settings`: secret-named settings, every header
that looks secret, URL passwords), from MCP servers' ``env`` and
``headers``, and from whatever a plugin resolves itself (a credential
chain), all through :func:`register_secret`.

:func:`install_log_redaction` makes every log record of llmport's and the
vendor SDKs' loggers pass through :func:`redact` (messages, arguments and
formatted tracebacks), including their child loggers such as
``botocore.auth``.

Why module state here: log records are process-wide by design (the logging
module is global), so the values to mask must be visible to every record of
the process. The set only grows, holds nothing but the secrets the process
was configured with, and is guarded by a lock; what :func:`redact` reads is
an immutable index swapped in whole.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..patterns import pattern
from ..slotted import dataclass, field
from .secrets_in_use import note_in_use

if TYPE_CHECKING:
    import logging

__all__ = [
    "LOGGERS",
    "SECRET_ENV_VARS",
    "Redactor",
    "header_secrets",
    "held_token",
    "install_log_redaction",
    "isolated_secrets",
    "looks_secret",
    "redact",
    "redact_data",
    "redact_echoes",
    "redact_settings",
    "redact_url",
    "register_secret",
]

#: The password of a URL's user info (``scheme://user:password@host``).
_URL_PASSWORD = pattern(r"(://[^/\s:@\"'<>]*):[^/\s@\"'<>]*@")
#: Query parameters whose value is a secret, by name: ``password``, ``sslpassword``,
#: ``pwd``, ``auth``, ``sig``, anything with ``key``, ``token``, ``secret``, ``credential``
#: or ``signature`` in it (``?api_key=``, ``&X-Amz-Signature=``).
_QUERY_SECRET_NAME = r"[\w.\-]*(?:key|token|secret|passw|pwd|credential|signature)[\w.\-]*|auth|sig"
_QUERY_SECRET = pattern(rf"(?i)([?&](?:{_QUERY_SECRET_NAME})=)(?!\*\*\*)[^&#\s\"'<>]+")
_QUERY_TRIGGERS = ("key", "token", "secret", "pass", "pwd", "credential", "auth", "sig")

#: Credential shapes vendors use, and the places they appear in echoed requests.
#: Each comes with lowercase trigger strings: a text holding none of them cannot
#: match, so the (slow, case-insensitive) pattern is not run on it.
_SECRET_PATTERNS: tuple[tuple[tuple[str, ...], re.Pattern[str], str], ...] = (
    # Vendors echo keys half-masked ("sk-proj-****ab12"): the stars are part of the match.
    (
        ("sk-", "sess-"),
        pattern(r"\b(sk-(?:ant-|proj-)?|sess-)[A-Za-z0-9_\-*]{8,}"),
        r"\1***",
    ),
    (("aiza",), pattern(r"\bAIza[0-9A-Za-z_\-]{20,}"), "AIza***"),
    (("akia", "asia"), pattern(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), r"\1***"),
    (("bearer",), pattern(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/\-]+=*"), r"\1 ***"),
    # A URL's query-string secrets: "?password=...", "&sslpassword=", "?api_key=", "&x-token=".
    (_QUERY_TRIGGERS, _QUERY_SECRET, r"\1***"),
    (
        ("api-key", "api_key", "authorization", "aws_s", "security-token"),
        pattern(
            r"(?i)\b((?:x-api-key|x-goog-api-key|api-key|api_key|authorization|"
            r"aws_secret_access_key|aws_session_token|x-amz-security-token)"
            r"[\"']?\s*[:=]\s*[\"']?)(?!\*\*\*)[^\s\"',}]+"
        ),
        r"\1***",
    ),
    # SigV4: "Credential=AKIA.../20250101/us-east-1/bedrock/aws4_request, Signature=..."
    (("credential=",), pattern(r"(?i)\b(Credential=)[^\s,/]+"), r"\1***"),
    (("signature=",), pattern(r"(?i)\b(Signature=)[0-9a-f]{16,}"), r"\1***"),
    # A URL's user info: "https://user:password@host" (httpx logs every request URL).
    (("://",), _URL_PASSWORD, r"\1:***@"),
)
_SECRET_SETTING = pattern(
    r"(?i)(api_?key|secret|token|password|credential|authorization|access_key|auth)"
    # ...but not a setting that names a wire field or a limit: the OpenAI plugin's
    # ``max_tokens_field = "max_completion_tokens"`` holds a field name, not a token.
    r"(?!\w*_field$)(?<!max_token)(?<!max_tokens)"
)
#: Header names whose values are secret, whatever the value looks like.
_SECRET_HEADER = pattern(r"(?i)(auth|key|token|secret|password|credential|signature|cookie)")
#: A header value that looks like a credential: one word of 16+ characters, letters
#: and digits, with a random-looking stretch (12+ letters or digits in a row):
#: ``prompt-caching-2024-07-31`` (an ``anthropic-beta`` value) is not one.
_TOKEN_LIKE = pattern(r"(?=[^\s]*[0-9])(?=[^\s]*[A-Za-z])(?=.*[A-Za-z0-9]{12})[\w\-.~+/=]{16,}")

#: The environment variables whose values are always masked literally.
SECRET_ENV_VARS = (
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
)
#: Shorter values are not masked literally: they would mangle ordinary text.
MIN_SECRET_LENGTH = 8
#: A run of this many consecutive characters of a secret is a partial echo.
PARTIAL_ECHO = 8
# How partial echoes are found fast: every 4-gram of every secret is indexed,
# and the text is probed every 5 characters. A run of >= 8 characters always
# holds a probe (any 8 consecutive positions contain a multiple of 5 followed
# by 3 more), which is then grown both ways against the secret.
_GRAM = 4
_STEP = PARTIAL_ECHO - _GRAM + 1


#: The public prefixes of vendor keys (the same for every key): not part of a partial echo.
_PUBLIC_PREFIX = pattern(r"sk-ant-(?:[a-z]+\d*-)?|sk-proj-|sk-|sess-|AIza|AKIA|ASIA")


@dataclass(frozen=True, slots=True)
class _Index:
    """The registered values, longest first, and where each 4-gram occurs in their bodies.

    A body is a value without its public prefix (``sk-proj-``, ``AIza``):
    ``sk-proj-`` alone tells nothing about a key (and the shapes keep it).
    A value registered without ``partial`` has an empty body: literal only.
    """

    values: tuple[str, ...] = ()
    members: frozenset[str] = frozenset()
    partial: tuple[bool, ...] = ()
    bodies: tuple[str, ...] = ()
    grams: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, registered: Mapping[str, bool]) -> _Index:
        ordered = tuple(sorted(registered, key=len, reverse=True))
        partial = tuple(registered[v] for v in ordered)
        bodies = tuple(_body(v) if p else "" for v, p in zip(ordered, partial, strict=True))
        grams: dict[str, list[tuple[int, int]]] = {}
        for number, body in enumerate(bodies):
            for offset in range(len(body) - _GRAM + 1):
                grams.setdefault(body[offset : offset + _GRAM], []).append((number, offset))
        at = {g: tuple(places) for g, places in grams.items()}
        return cls(ordered, frozenset(ordered), partial, bodies, at)

    def adding(self, extra: Iterable[str]) -> _Index:
        """This index and ``extra`` (masked literally and by partial echo)."""
        registered = dict(zip(self.values, self.partial, strict=True))
        return _Index.of({**registered, **dict.fromkeys(extra, True)})

    def partial_runs(self, text: str) -> Iterator[tuple[int, int]]:
        """(start, end) of every run of >= 8 characters of a secret's body in ``text``."""
        grams = self.grams
        if not grams:
            return
        # A comprehension: the probe loop is the hot path (20 000 probes per 100 kB).
        probes = [p for p in range(0, len(text) - _GRAM + 1, _STEP) if text[p : p + _GRAM] in grams]
        for probe in probes:
            yield from self._grow(text, probe, grams[text[probe : probe + _GRAM]])

    def _grow(
        self, text: str, probe: int, found: tuple[tuple[int, int], ...]
    ) -> Iterator[tuple[int, int]]:
        for number, offset in found:
            body = self.bodies[number]
            left = 0
            while (
                left < probe and left < offset and text[probe - left - 1] == body[offset - left - 1]
            ):
                left += 1
            right = _GRAM
            while (
                probe + right < len(text)
                and offset + right < len(body)
                and text[probe + right] == body[offset + right]
            ):
                right += 1
            start, end = probe - left, probe + right
            if end - start >= PARTIAL_ECHO and not _plain_word(text[start:end]):
                yield start, end


def _body(value: str) -> str:
    prefix = _PUBLIC_PREFIX.match(value)
    return value[prefix.end() :] if prefix else value


def _plain_word(run: str) -> bool:
    """Letters only, of one case: reads as a word (``contract``); random keys rarely do."""
    return run.isalpha() and (run.islower() or run.isupper())


_lock = threading.Lock()
_registered: dict[str, bool] = {}  # value -> masked by partial echo too
_index: list[_Index] = [_Index()]  # swapped whole on each registration; read without the lock


def held_token(credentials: object) -> tuple[str, ...]:
    """The access token a credentials object (google-auth's) holds now, registered; else ().

    Such tokens change each time the credentials refresh: a provider asks
    for the current one whenever it masks an error.
    """
    token = getattr(credentials, "token", None)
    if not isinstance(token, str) or not token:
        return ()
    register_secret(token)
    return (token,)


def register_secret(value: object, *, partial: bool = True) -> None:
    """Mask ``value`` in every :func:`redact` from now on (no-op if short).

    Literally, and with ``partial`` (for keys and tokens) any 8 or more of its
    characters in a row too. A value that is not a credential itself (an MCP
    server's ``PATH``) is registered with ``partial=False``: its fragments
    are ordinary text.
    """
    if isinstance(value, str) and len(value) >= MIN_SECRET_LENGTH:
        if partial:
            note_in_use((value,))  # a block recording what it uses (a cassette) needs it
        with _lock:
            known = _registered.get(value)
            if known is None or (partial and not known):
                _registered[value] = partial
                _index[0] = _Index.of(_registered)


@contextlib.contextmanager
def isolated_secrets() -> Iterator[None]:
    """Within the block only the secrets registered in it are known; after it, the registry
    is as it was before.

    For tests: the registry is process-wide, so a worker that ran other tests
    first holds their keys, whose partial echoes may match ordinary text (a
    header value) in what a test then checks for leftover secrets.
    """
    with _lock:
        saved = dict(_registered)
        _registered.clear()
        _index[0] = _Index.of(_registered)
    try:
        yield
    finally:
        with _lock:
            _registered.clear()
            _registered.update(saved)
            _index[0] = _Index.of(_registered)


def looks_secret(name: str, value: str) -> bool:
    """Whether a named value (a setting, an environment variable) is a credential.

    Its name says so (``*_TOKEN``, ``api_key``, ``password``, ...) or its
    value looks like one (one word of letters and digits, random-looking).
    """
    return bool(_SECRET_SETTING.search(name) or _TOKEN_LIKE.fullmatch(value))


def register_settings(settings: Mapping[str, object]) -> None:
    """Register every secret of ``settings``: see :func:`secret_values`."""
    for value in secret_values(settings):
        register_secret(value)


def register_environment() -> None:
    """Register the values of :data:`SECRET_ENV_VARS` set now (each Runtime does this)."""
    for name in SECRET_ENV_VARS:
        register_secret(os.environ.get(name))


def secret_values(settings: Mapping[str, object]) -> tuple[str, ...]:
    """The secrets among ``settings``, whatever the setting's name.

    Secret-named string values (``api_key``, ``aws_secret_access_key``,
    ``auth_token``), the password of any URL value (``https://u:pw@host``),
    and, in any mapping of headers (``default_headers``, ...), every value
    :func:`header_secrets` finds.
    """
    found: list[str] = []
    for name, value in settings.items():
        if isinstance(value, str):
            if _SECRET_SETTING.search(name):
                found.append(value)
            found.extend(url_passwords(value))
        elif isinstance(value, Mapping) and "header" in name.lower():
            found.extend(header_secrets(value))
    return tuple(v for v in found if len(v) >= MIN_SECRET_LENGTH)


def header_secrets(headers: Mapping[Any, Any]) -> tuple[str, ...]:
    """The secret values of HTTP ``headers``.

    A value is secret when the header's name looks like one (auth, key,
    token, ...), when the value is already a registered secret, or when it
    looks like a credential itself (one long word of letters and digits);
    for ``Scheme value`` (``Bearer ...``) the bare value counts as well.
    """
    return _header_secrets(headers, _index[0].members)


def _header_secrets(headers: Mapping[Any, Any], known: frozenset[str]) -> tuple[str, ...]:
    found: list[str] = []
    for name, raw in headers.items():
        value = str(raw)
        bare = value.split(" ", 1)[-1]
        if (
            _SECRET_HEADER.search(str(name))
            or value in known
            or _TOKEN_LIKE.fullmatch(value)
            or _TOKEN_LIKE.fullmatch(bare)
        ):
            found.extend((value, bare) if bare != value else (value,))
    return tuple(found)


def url_passwords(value: str) -> tuple[str, ...]:
    """The secrets of a URL, as written and decoded: its user info's password
    (``scheme://user:password@host``) and its secret-named query parameters
    (``?password=...``, ``&sslpassword=``, ``?api_key=``)."""
    if "://" not in value:
        return ()
    # urllib.parse (and the ipaddress module it loads) only for a value that looks like a URL.
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(value.strip())
        password = parts.password
    except ValueError:  # not a URL after all
        return ()
    found = [password] if password else []
    found += [m.group(0)[len(m.group(1)) :] for m in _QUERY_SECRET.finditer("?" + parts.query)]
    return tuple(v for raw in found for v in (raw, unquote(raw)))


def redact_url(url: str) -> str:
    """``url`` for display: its user info's password and secret query parameters ``***``.

    The one way a URL is shown (session store errors, ``llmport session list``,
    a limiter's URL in a :class:`~llmport.provider.config.Config`):
    ``postgresql://app:***@db/x?sslmode=require&password=***``.
    """
    return _QUERY_SECRET.sub(r"\1***", _URL_PASSWORD.sub(r"\1:***@", url))


def known_secrets() -> tuple[str, ...]:
    """The values masked literally, longest first (so no secret is half-masked)."""
    return _index[0].values


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with secrets, their partial echoes and credential shapes replaced by ``***``.

    ``secrets`` are values masked on top of the registered ones (literally
    and by partial echo). A text with nothing to mask comes back as the same
    object (a ``str`` subclass such as an MCP output keeps its type).
    """
    index = _index[0]
    extra = [s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH and s not in index.members]
    if extra:
        index = index.adding(extra)
    return _redact_with(text, index)


def redact_echoes(text: str) -> str:
    """``text`` with the registered secrets and their partial echoes masked, and nothing else.

    For a link a vendor made for the caller (a signed download URL): its own
    ``sig=`` is what makes it usable, so the credential shapes :func:`redact`
    also masks are kept; a key of the caller's echoed into it is not. Logs,
    the session store and cassettes still show such a link through
    :func:`redact`.
    """
    return _redact_with(text, _index[0], shapes=False)


def _redact_with(text: str, index: _Index, *, shapes: bool = True) -> str:
    """``text`` with ``index``'s values and their echoes masked (and, with ``shapes``,
    anything shaped like a credential)."""
    original = text
    for secret in index.values:
        if secret in text:
            text = text.replace(secret, "***")
    if shapes:
        lowered = text.lower()
        for triggers, secret_pattern, replacement in _SECRET_PATTERNS:
            if any(t in lowered for t in triggers):
                text = secret_pattern.sub(replacement, text)
    if "***" in text:
        text = _mask_starred_echoes(text, index)
    text = _mask_partial_echoes(text, index)
    return original if text == original else text


#: A run of stars, and the key characters a vendor may show on either side of it.
_STARS = pattern(r"\*{3,}")
_KEY_CHARS_AFTER = pattern(r"[\w\-.~+/=]{1,256}")
_KEY_CHARS = frozenset("-.~+/=_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _mask_starred_echoes(text: str, index: _Index) -> str:
    """``text`` with a vendor's own half-masking of a secret replaced by ``***``.

    Around a run of stars, the characters shown before it are the start of
    a registered secret and those after it its end (``AIzaSyFA****hijk``);
    together they show 8 or more of its characters, not counting its public
    prefix (``AIza``, ``sk-proj-``).
    """
    pieces: list[str] = []
    done = 0
    for stars in _STARS.finditer(text):
        start, end = stars.span()
        if start < done:
            continue
        first = start
        while first > max(done, start - 256) and text[first - 1] in _KEY_CHARS:
            first -= 1
        after = _KEY_CHARS_AFTER.match(text, end)
        if first == start or after is None:
            continue
        shown = _shown_ends(text[first:start], after.group(), index)
        if shown is not None:
            head, tail = shown
            pieces += [text[done : start - head], "***"]
            done = end + tail
    return "".join([*pieces, text[done:]]) if pieces else text


def _shown_ends(left: str, right: str, index: _Index) -> tuple[int, int] | None:
    """``(head, tail)``: how much of a secret's start ends ``left`` and of its end starts
    ``right``, for the first secret they show 8 or more characters of; else None."""
    for value, body, partial in zip(index.values, index.bodies, index.partial, strict=True):
        if not partial:
            continue
        head = _common_head(left, value)
        tail = _common_tail(right, value) if head else 0
        if tail and head - (len(value) - len(body)) + tail >= PARTIAL_ECHO:
            return head, tail
    return None


def _common_head(left: str, value: str) -> int:
    """How many characters ``left`` ends with that ``value`` starts with (the most)."""
    for size in range(min(len(left), len(value)), 0, -1):
        if left.endswith(value[:size]):
            return size
    return 0


def _common_tail(right: str, value: str) -> int:
    """How many characters ``right`` starts with that ``value`` ends with (the most)."""
    for size in range(min(len(right), len(value)), 0, -1):
        if right.startswith(value[-size:]):
            return size
    return 0


def _mask_partial_echoes(text: str, index: _Index) -> str:
    runs = sorted(index.partial_runs(text))
    if not runs:
        return text
    pieces: list[str] = []
    done = 0
    for start, end in runs:
        if end <= done:
            continue
        if start > done:
            pieces.append(text[done:start])
        if not pieces or pieces[-1] != "***":
            pieces.append("***")
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def redact_data(value: object) -> object:
    """``value`` with every string in it passed through :func:`redact` (dicts, lists, tuples).

    String by string, before any encoding: a mask never cuts through a JSON
    escape. Tuples come back as lists (JSON has no tuples).
    """
    return _each_string(value, redact)


def _each_string(value: object, redact_one: Callable[[str], str]) -> object:
    if isinstance(value, str):
        return redact_one(value)
    if isinstance(value, dict):
        return {k: _each_string(v, redact_one) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_each_string(v, redact_one) for v in value]
    return value


class Redactor:
    """The rules of :func:`redact` against the given secrets only, not the process's registry.

    For what records one block of code (a cassette): it masks the keys that
    block used (:mod:`llmport.observe.secrets_in_use`) and the credential
    shapes, and nothing a key registered elsewhere in the process would::

        scoped = Redactor(["sk-fake-key-0123456789"])
        scoped.redact("echo: key-0123456789")        # 'echo: ***'
    """

    __slots__ = ("_index",)

    def __init__(self, secrets: Iterable[str]) -> None:
        usable = (s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LENGTH)
        self._index = _Index.of(dict.fromkeys(usable, True))

    @property
    def secrets(self) -> frozenset[str]:
        """The values masked literally and by partial echo."""
        return self._index.members

    def redact(self, text: str) -> str:
        """``text`` with these secrets, their partial echoes and credential shapes ``***``."""
        return _redact_with(text, self._index)

    def redact_data(self, value: object) -> object:
        """``value`` with every string in it redacted (as :func:`redact_data`)."""
        return _each_string(value, self.redact)

    def header_secrets(self, headers: Mapping[Any, Any]) -> tuple[str, ...]:
        """The secret values of ``headers`` (as :func:`header_secrets`, these secrets known)."""
        return _header_secrets(headers, self._index.members)


def redact_settings(settings: Mapping[str, object]) -> dict[str, object]:
    """A copy of ``settings`` for display: secret-named values ``***``, the rest redacted.

    Strings pass through :func:`redact` (a URL's password), and so do the
    string values of a mapping (``default_headers``).
    """
    return {k: "***" if _SECRET_SETTING.search(k) and v else _shown(v) for k, v in settings.items()}


def _shown(value: object) -> object:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        secrets = header_secrets(value)
        return {k: redact(v, secrets) if isinstance(v, str) else v for k, v in value.items()}
    return value


# --- logging ---------------------------------------------------------------------

#: Loggers (and their children) whose records are redacted.
LOGGERS = (
    "llmport",
    "openai",
    "anthropic",
    "google_genai",
    "google.genai",
    "botocore",
    "boto3",
    "urllib3",
    "httpx",
    "httpx2",
    "httpcore",
    "aiohttp",
    "mcp",
)


def _covered(name: str) -> bool:
    return any(name == root or name.startswith(root + ".") for root in LOGGERS)


def redact_record(record: logging.LogRecord) -> logging.LogRecord:
    """Redact a record in place: message and arguments folded, traceback pre-formatted."""
    import logging

    try:
        message = record.getMessage()
    except Exception:  # a record whose arguments do not fit its format: keep it as text
        message = f"{record.msg!r} % {record.args!r}"
    record.msg = redact(message)
    record.args = None
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact(record.exc_text)
        record.exc_info = None  # handlers use exc_text; the live exception may hold secrets
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    return record


_installed: list[bool] = []


def install_log_redaction() -> None:
    """Redact every record of the covered loggers, whatever handler receives it.

    A filter on a logger does not see its children's records, and handlers
    belong to the application, so the redaction sits in the log record
    factory (wrapping, never replacing, any factory already installed).
    Idempotent. Also registers the key values of the environment.
    """
    import logging  # here, not at import: ``import llmport`` stays cheap

    register_environment()
    with _lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: object, **kwargs: object) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            if _covered(record.name):
                redact_record(record)
            return record

        logging.setLogRecordFactory(factory)
        _installed.append(True)
