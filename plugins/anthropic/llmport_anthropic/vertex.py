"""Claude on Vertex AI: the ``anthropic-vertex`` provider.

The same Messages API as :class:`~llmport_anthropic.provider.AnthropicProvider`
(one conversion, one answer reader), sent through the anthropic SDK's
``AnthropicVertex`` / ``AsyncAnthropicVertex`` clients, which authenticate
with Google credentials (``Authorization: Bearer <access token>``).

Settings (``Runtime(providers={"anthropic-vertex": {...}})`` or
``[providers.anthropic-vertex]``):

* ``region``: default ``CLOUD_ML_REGION`` (``us-east5``, ``europe-west1``,
  ``global``, ...); required;
* ``project_id``: default ``ANTHROPIC_VERTEX_PROJECT_ID``, else the project
  of the Google credentials;
* ``access_token``: an OAuth access token to send as is; or ``credentials``:
  a ``google.auth.credentials.Credentials`` object (refreshed by the SDK);
  without either, Application Default Credentials (``google.auth.default``:
  ``GOOGLE_APPLICATION_CREDENTIALS``, gcloud's login, the metadata server),
  resolved when the first client is made. No credentials: a ConfigError
  before any request;
* ``base_url``: default ``ANTHROPIC_VERTEX_BASE_URL``, else the region's
  endpoint (``https://{region}-aiplatform.googleapis.com/v1``);
* ``timeout``, ``default_headers``, ``async_transport``: as for ``anthropic``.

What differs from the Anthropic API (Google's "Use Claude models" page of the
Vertex AI documentation): the model is in the URL, not the body
(``POST /projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict``,
``:streamRawPredict`` when streamed), the body carries
``anthropic_version: "vertex-2023-10-16"``, model ids are versioned with
``@`` (``claude-sonnet-4-5@20250929``), and there is no batch API (the SDK
refuses it too). Token counting goes to ``count-tokens:rawPredict``.
Fields given as ``vendor={"anthropic": {...}}`` apply here too (the same
Messages API); ``vendor={"anthropic-vertex": {...}}`` only here, and wins.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from llmport.errors import (
    AuthenticationError,
    ConfigError,
    ProviderConnectionError,
    ProviderError,
    UnsupportedFeatureError,
)
from llmport.messages.types import FileRef, MediaBlock, ModelCapabilities, Request
from llmport.observe.redaction import held_token, register_secret
from llmport.provider.contract import ProviderInfo
from llmport.provider.translate import translating
from llmport.provider.wire import Body

from . import convert_in, sdk_internals
from .convert_in import AnthropicPrepared
from .errors import translate
from .models import family_for, vertex_model_id
from .provider import AnthropicProvider, wire_body

#: The ``anthropic_version`` Vertex AI takes in the body (Google's Claude on Vertex AI docs).
VERTEX_VERSION = "vertex-2023-10-16"
NAME = "anthropic-vertex"

SETTINGS = frozenset(
    {
        "region",
        "project_id",
        "access_token",
        "credentials",
        "base_url",
        "timeout",
        "default_headers",
        "async_transport",
    }
)


class AnthropicVertexProvider(AnthropicProvider):
    """``anthropic-vertex:<model>``: Claude through Vertex AI (``claude-sonnet-4-5@20250929``)."""

    name = NAME

    def __init__(self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None):
        given = dict(settings or {})
        unknown = sorted(set(given) - SETTINGS)
        if unknown:
            raise ConfigError(
                f"{NAME}: unknown setting(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(SETTINGS))}"
            )
        # Google's settings are not the Anthropic provider's: kept aside (it checks the rest).
        self._google = {
            k: given.pop(k) for k in ("region", "project_id", "credentials") if k in given
        }
        token = given.pop("access_token", None)
        #: The Google credentials in use (the setting, else ADC once loaded; None with a token).
        self._credentials: Any = self._google.get("credentials")
        self._adc_project: str | None = None  # the project ADC named, once loaded
        super().__init__(given, info)
        self._token: str | None = token
        if token:
            register_secret(token)
            self._secrets = (*self._secrets, token)

    def __repr__(self) -> str:
        return f"AnthropicVertexProvider(region={self.region()!r}, project_id={self.project()!r})"

    # -- where requests go ---------------------------------------------------------

    def region(self) -> str | None:
        """The region: the setting, else ``CLOUD_ML_REGION``."""
        return self._google.get("region") or os.environ.get("CLOUD_ML_REGION") or None

    def project(self) -> str | None:
        """The project: the setting, else ``ANTHROPIC_VERTEX_PROJECT_ID``, else None."""
        return (
            self._google.get("project_id") or os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID") or None
        )

    def client_kwargs(self) -> dict[str, Any]:
        """``AnthropicVertex`` arguments; credentials resolved now (ConfigError, nothing sent)."""
        region = self.region()
        if not region:
            raise ConfigError(f"{NAME}: no region: set CLOUD_ML_REGION or the region setting")
        project = self.project()
        kwargs: dict[str, Any] = {"region": region, "max_retries": 0}
        if self._token:
            kwargs["access_token"] = self._token
        else:
            if self._credentials is None and self.own_endpoint:
                # Application Default Credentials are the environment's: meant for Google.
                raise ConfigError(
                    f"{self.name}: an instance with a base_url of its own is sent only the "
                    "access_token or credentials its settings give, never Application "
                    "Default Credentials"
                )
            if self._credentials is None:
                self._credentials, self._adc_project = _default_credentials(project)
            project = project or self._adc_project
            kwargs["credentials"] = self._credentials
        if not project:
            raise ConfigError(
                f"{NAME}: no project: set ANTHROPIC_VERTEX_PROJECT_ID or the project_id setting"
            )
        kwargs["project_id"] = project
        for name in ("base_url", "timeout"):
            if self.settings.get(name) is not None:
                kwargs[name] = self.settings[name]
        if self.settings.get("default_headers"):
            kwargs["default_headers"] = dict(self.settings["default_headers"])
        return kwargs

    def sdk_clients(self) -> tuple[Any, Any]:
        """``AnthropicVertex`` and ``AsyncAnthropicVertex``."""
        from anthropic import AnthropicVertex, AsyncAnthropicVertex

        return AnthropicVertex, AsyncAnthropicVertex

    def translating(self) -> translating:
        """Anthropic's errors and google-auth's; the access token in use masked.

        A token minted from credentials changes when they refresh: the
        current one is added (and registered for the logs) each time.
        """
        return translating(self.name, _translate, (*self._secrets, *held_token(self._credentials)))

    def batch_backend(self) -> Any:
        """None: Vertex AI has no Message Batches API (the SDK refuses it as well)."""
        return None

    # -- no Files API ------------------------------------------------------------------
    # Source: Anthropic, "Files API": not supported on Amazon Bedrock or Google Vertex AI
    #   (and the SDK's AnthropicVertex has no beta.files: the inherited calls would fail on
    #   a missing attribute).

    def upload(self, block: MediaBlock, purpose: str | None = None) -> FileRef:
        raise _no_files_api("uploading files")

    async def aupload(self, block: MediaBlock, purpose: str | None = None) -> FileRef:
        raise _no_files_api("uploading files")

    def delete_file(self, ref: FileRef) -> None:
        raise _no_files_api("deleting files")

    async def adelete_file(self, ref: FileRef) -> None:
        raise _no_files_api("deleting files")

    def list_files(self) -> list[FileRef]:
        raise _no_files_api("listing files")

    async def alist_files(self) -> list[FileRef]:
        raise _no_files_api("listing files")

    # -- model facts ---------------------------------------------------------------

    def capabilities(self, model: str) -> ModelCapabilities:
        """The registered (Vertex-id) capabilities, else the family table's."""
        if self.info is None:
            return family_for(vertex_model_id(model)).caps
        return super().capabilities(model)

    def prepare(self, request: Request) -> AnthropicPrepared:
        """As for Anthropic, with the family of the Vertex id (``@`` read as ``-``)."""
        request = self.with_tool_fields_of(request, "anthropic")
        caps = self.check(request)
        family = family_for(vertex_model_id(request.model))
        return convert_in.build_request(request, caps, family, self.vendor_fields(request))

    def vendor_fields(self, request: Request) -> dict[str, Any]:
        """``vendor={"anthropic": ...}`` fields, then ``{"anthropic-vertex": ...}`` over them."""
        return {**request.vendor.get("anthropic", {}), **request.vendor.get(NAME, {})}

    # -- the wire --------------------------------------------------------------------

    def route(
        self, own: AnthropicPrepared, client: Any, *, stream: bool
    ) -> tuple[str, Body, dict[str, Any]]:
        """``.../publishers/anthropic/models/{model}:rawPredict`` (``:streamRawPredict``).

        The body is Anthropic's without ``model``, with ``anthropic_version``
        (one the caller gave through ``vendor=`` wins), as the SDK's Vertex
        client sends ``messages.create``.
        """
        body, options = wire_body(own, client, stream=stream, reshape=_vertex_body)
        return vertex_path(client, own.params["model"], stream=stream), body, options

    def build_count_request(self, request: Request) -> dict[str, Any]:
        """As for Anthropic, with Vertex AI's ``anthropic_version`` in the body."""
        args = super().build_count_request(request)
        extra = dict(args.get("extra_body") or {})
        extra.setdefault("anthropic_version", VERTEX_VERSION)
        return {**args, "extra_body": extra}


def _vertex_body(body: dict[str, Any]) -> dict[str, Any]:
    """Anthropic's body as Vertex AI takes it: no ``model``, ``anthropic_version`` set."""
    shaped = {k: v for k, v in body.items() if k != "model"}
    shaped.setdefault("anthropic_version", VERTEX_VERSION)
    return shaped


def vertex_path(client: Any, model: str, *, stream: bool) -> str:
    """The model's ``rawPredict`` path, percent-encoded as the SDK's Vertex client encodes it."""
    specifier = "streamRawPredict" if stream else "rawPredict"
    template = (
        "/projects/{project_id}/locations/{region}/publishers/anthropic/models/{model}:{specifier}"
    )
    url = sdk_internals.vertex_request_path(
        template,
        project_id=client.project_id,
        region=client.region,
        model=model,
        specifier=specifier,
    )
    parent, _, segment = url.rpartition("/")
    return f"{parent}/{segment.replace(';', '%3B')}"


def _no_files_api(what: str) -> UnsupportedFeatureError:
    """The typed refusal of a Files API call, before any request."""
    return UnsupportedFeatureError(
        NAME, "", what, "Vertex AI has no Files API; send media inline or as URLs"
    )


def _default_credentials(project: str | None) -> tuple[Any, str | None]:
    """Application Default Credentials (a first token minted) and their project.

    Loaded by the SDK's own Vertex auth helper (google-auth, imported by the
    SDK). Credentials found nowhere, google-auth not installed, or no project
    anywhere: a :class:`ConfigError` before any request. A failing token
    endpoint is left to :func:`_translate` (an authentication or connection error).
    """
    try:
        return sdk_internals.vertex_default_credentials(project)
    except Exception as exc:
        kind = type(exc).__name__
        if kind == "DefaultCredentialsError":
            problem = (
                "no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS, run `gcloud auth "
                "application-default login`, or give the access_token or credentials setting"
            )
        elif kind == "MissingDependencyError":
            problem = "Google credentials need google-auth: pip install 'anthropic[vertex]'"
        elif isinstance(exc, ValueError) and "project_id" in str(exc):
            problem = "no project: set ANTHROPIC_VERTEX_PROJECT_ID or the project_id setting"
        else:
            raise
    raise ConfigError(f"{NAME}: {problem}") from None


def _translate(exc: BaseException) -> ProviderError | None:
    """The SDK's errors as for Anthropic; google-auth's token and transport failures too."""
    found = translate(exc)
    if found is not None or not type(exc).__module__.startswith("google.auth"):
        return found
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "TransportError" in names:
        return ProviderConnectionError(
            f"{NAME}: could not reach Google's token endpoint", provider=NAME
        )
    return AuthenticationError(
        f"{NAME}: Google credentials failed ({type(exc).__name__})", provider=NAME
    )
