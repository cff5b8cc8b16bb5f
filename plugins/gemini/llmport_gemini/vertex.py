"""Gemini on Vertex AI: the ``gemini-vertex`` provider.

The Gemini provider with Vertex AI always on (``vertexai=True``): the same
conversion and answers, sent by ``google-genai``'s Vertex AI client to
``POST https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent``
(``:streamGenerateContent?alt=sse`` when streamed; ``aiplatform.googleapis.com``
for the ``global`` location) with ``Authorization: Bearer <access token>``.

Settings (``Runtime(providers={"gemini-vertex": {...}})`` or
``[providers.gemini-vertex]``): ``project`` (default ``GOOGLE_CLOUD_PROJECT``,
else the project of the Application Default Credentials), ``location``
(default ``GOOGLE_CLOUD_LOCATION``, else ``global``), ``credentials`` (a
``google.auth`` credentials object; default: Application Default
Credentials), ``api_key`` (Vertex AI express mode instead of a project;
only from this setting, so a Developer API key in ``GEMINI_API_KEY`` never
turns this provider into express mode), and the Gemini provider's
``base_url``, ``api_version`` (default ``v1``, Vertex AI's stable
version; google-genai's own default would be ``v1beta1``), ``timeout``, ``default_headers``,
``async_transport``. Credentials found nowhere, or no project anywhere: a
:class:`~llmport.errors.ConfigError` before any request.

Vendor fields: ``vendor={"gemini": {...}}`` applies here too (the same
API); ``vendor={"gemini-vertex": {...}}`` only here, and wins.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from llmport.errors import ConfigError
from llmport.messages.types import Request
from llmport.observe.redaction import held_token
from llmport.provider.contract import Prepared, ProviderInfo
from llmport.provider.translate import translating

from .errors import translate
from .provider import GeminiProvider

NAME = "gemini-vertex"
#: The OAuth scope Vertex AI calls need.
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"


class GeminiVertexProvider(GeminiProvider):
    """``gemini-vertex:<model>``: Gemini through Vertex AI."""

    name = NAME
    images_hint = "not an Imagen model: use gemini-vertex:imagen-4.0-generate-001"

    def __init__(self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None):
        given = dict(settings or {})
        if given.get("vertexai") is False:
            raise ConfigError(f"{NAME}: always Vertex AI; use gemini: for the Developer API")
        # Vertex AI's stable REST version (google-genai would pick v1beta1).
        given.setdefault("api_version", "v1")
        super().__init__({**given, "vertexai": True}, info)
        #: The Google credentials in use: the setting, else ADC once loaded.
        self._credentials: Any = self.settings.get("credentials")
        self._adc_project: str | None = None  # the project ADC named, once loaded

    def api_key(self) -> str | None:
        """An express-mode key: the ``api_key`` setting only."""
        return self.settings.get("api_key") or None

    def client_kwargs(self) -> dict[str, Any]:
        """The Vertex AI client's arguments: project, location and credentials resolved now.

        Without a key or a project (setting or ``GOOGLE_CLOUD_PROJECT``), the
        project comes from Application Default Credentials, loaded here so
        that their absence is a ConfigError rather than the SDK's ValueError.
        """
        kwargs = super().client_kwargs()
        if kwargs.get("api_key"):
            return kwargs
        kwargs.setdefault("location", os.environ.get("GOOGLE_CLOUD_LOCATION") or "global")
        project = kwargs.get("project") or os.environ.get("GOOGLE_CLOUD_PROJECT")
        if not project and self._credentials is None:
            self._credentials, self._adc_project = _default_credentials()
        project = project or self._adc_project
        if self._credentials is not None:
            kwargs["credentials"] = self._credentials
        if not project:
            raise ConfigError(
                f"{NAME}: no project: set GOOGLE_CLOUD_PROJECT or the project setting"
            )
        kwargs["project"] = project
        return kwargs

    def translating(self) -> translating:
        """As for Gemini, with the access token the credentials hold now masked too."""
        return translating(self.name, translate, (*self._secrets, *held_token(self._credentials)))

    @property
    def files_vendor(self) -> str:
        """Its own name: no other provider's reference is its, and its file calls are refused
        as Vertex AI's (no Files API), not as a reference of another account."""
        return self.name

    def prepare(self, request: Request) -> Prepared:
        """As for Gemini, with ``Tool(vendor={"gemini-vertex": ...})`` over ``"gemini"``'s."""
        return super().prepare(self.with_tool_fields_of(request, "gemini"))

    def vendor_fields(self, request: Request) -> dict[str, Any]:
        """``vendor={"gemini": ...}`` fields, then ``vendor={"gemini-vertex": ...}`` over them."""
        return {**request.vendor.get("gemini", {}), **request.vendor.get(NAME, {})}


def _default_credentials() -> tuple[Any, str | None]:
    """Application Default Credentials and their project; ConfigError when there are none."""
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        credentials, project = google.auth.default(scopes=[CLOUD_PLATFORM])
    except DefaultCredentialsError:
        error = ConfigError(
            f"{NAME}: no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS, run `gcloud "
            "auth application-default login`, or give the credentials or api_key setting"
        )
    else:
        return credentials, project
    raise error from None
