"""What :class:`~llmport.Runtime` offers of what lives at the vendor: files, conversations,
jobs, image endpoints.

Four small classes the runtime inherits, so it keeps these methods (their
names, parameters and docstrings) while its own class holds only what is its
own: settings, routing, calls and lifecycle. Each method hands the runtime
to the engine module that does the work, imported on first use (the
engine's cost is not paid by ``from llmport import Runtime``). The ``self``
of each is typed as the narrow protocol that module reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Unpack

if TYPE_CHECKING:
    from ..controls.options import SubmitParams
    from ..messages.images import ImageFormat, ImageQuality, Images
    from ..messages.types import FileRef
    from .calls import Owner
    from .files import FilesOwner
    from .jobs.background import BackgroundJob
    from .jobs.batch import BatchJob
    from .settings import RunSettings

__all__ = ["ConversationMethods", "FileMethods", "ImageMethods", "JobMethods"]


class FileMethods:
    """Files by reference (:mod:`llmport.engine.files`): upload once, send a FileRef."""

    def upload(
        self: FilesOwner, source: Any, *, provider: str | None = None, purpose: str | None = None
    ) -> FileRef:
        """Upload a file once; send the returned FileRef in content instead of its bytes.

        ``source``: a path, a MediaBlock, a content dict, or (Bedrock) an
        ``s3://`` URI. ``provider``: a provider name (default: the default
        model's). ``purpose``: the vendor's own (OpenAI ``"assistants"`` for the
        code interpreter; default ``"user_data"``).
        """
        from . import files

        return files.upload(self, source, provider, purpose)

    async def aupload(
        self: FilesOwner, source: Any, *, provider: str | None = None, purpose: str | None = None
    ) -> FileRef:
        """Async :meth:`upload`."""
        from . import files

        return await files.aupload(self, source, provider, purpose)

    def delete_file(self: FilesOwner, ref: FileRef) -> None:
        """Delete an uploaded file from the vendor that holds it."""
        from . import files

        files.delete_file(self, ref)

    async def adelete_file(self: FilesOwner, ref: FileRef) -> None:
        """Async :meth:`delete_file`."""
        from . import files

        await files.adelete_file(self, ref)

    def files(self: FilesOwner, *, provider: str | None = None) -> list[FileRef]:
        """The files uploaded to ``provider``'s files API (default: the default model's)."""
        from . import files

        return files.files(self, provider)

    async def afiles(self: FilesOwner, *, provider: str | None = None) -> list[FileRef]:
        """Async :meth:`files`."""
        from . import files

        return await files.afiles(self, provider)


class ConversationMethods:
    """Conversations kept on the vendor's server (:mod:`llmport.engine.state`)."""

    def create_conversation(self: RunSettings, *, provider: str = "openai-responses") -> str:
        """A new conversation kept on the vendor's server; its id goes to ``conversation=``."""
        from . import state

        return state.create_conversation(self, provider)

    async def acreate_conversation(self: RunSettings, *, provider: str = "openai-responses") -> str:
        """Async :meth:`create_conversation`."""
        from . import state

        return await state.acreate_conversation(self, provider)

    def delete_conversation(
        self: RunSettings, conversation: str, *, provider: str = "openai-responses"
    ) -> None:
        """Delete a conversation :meth:`create_conversation` made."""
        from . import state

        state.delete_conversation(self, conversation, provider)

    async def adelete_conversation(
        self: RunSettings, conversation: str, *, provider: str = "openai-responses"
    ) -> None:
        """Async :meth:`delete_conversation`."""
        from . import state

        await state.adelete_conversation(self, conversation, provider)


class JobMethods:
    """Jobs the vendor finishes on its side: batches, background runs (:mod:`.jobs`)."""

    def batch(
        self: RunSettings,
        requests: Iterable[Any],
        *,
        model: str | None = None,
        batch_options: Mapping[str, Any] | None = None,
        **common: Any,
    ) -> BatchJob:
        """Submit ``exec`` requests (each with a ``custom_id``) through the vendor's batch API."""
        from .jobs import batch

        return batch.batch(self, requests, model=model, batch_options=batch_options, **common)

    async def abatch(
        self: RunSettings,
        requests: Iterable[Any],
        *,
        model: str | None = None,
        batch_options: Mapping[str, Any] | None = None,
        **common: Any,
    ) -> BatchJob:
        """Async :meth:`batch`."""
        from .jobs import batch

        return await batch.abatch(
            self, requests, model=model, batch_options=batch_options, **common
        )

    def batch_job(
        self: RunSettings,
        job_id: str,
        *,
        requests: Iterable[Any] | None = None,
        model: str | None = None,
        **common: Any,
    ) -> BatchJob:
        """Resume the batch job ``job_id`` (``"provider:vendor-id"``), e.g. after a restart."""
        from .jobs import batch

        return batch.batch_job(self, job_id, requests=requests, model=model, **common)

    def submit(self: Owner, content: Any = None, **params: Unpack[SubmitParams]) -> BackgroundJob:
        """Start a run in the vendor's background mode (``stream=True``: streaming from now).

        Takes ``exec``'s parameters; see :mod:`llmport.engine.jobs.background`.
        """
        from .jobs import background

        return background.background(self, self, content, **params)

    async def asubmit(
        self: Owner, content: Any = None, **params: Unpack[SubmitParams]
    ) -> BackgroundJob:
        """Async :meth:`submit`."""
        from .jobs import background

        return await background.abackground(self, self, content, **params)

    def background_job(self: Owner, job_id: str) -> BackgroundJob:
        """Resume the background run ``job_id`` (``"provider:vendor-id"``), e.g. after a restart."""
        from .jobs import background

        return background.background_job(self, job_id)


class ImageMethods:
    """Image endpoints (:mod:`llmport.engine.images`): images from a prompt, with usage."""

    def generate_image(
        self: RunSettings,
        prompt: str,
        *,
        model: str | None = None,
        size: str | None = None,
        n: int = 1,
        quality: ImageQuality | None = None,
        output_format: ImageFormat | None = None,
        seed: int | None = None,
        vendor: Mapping[str, Mapping[str, Any]] | None = None,
        deadline: float | None = None,
    ) -> Images:
        """Generate ``n`` images from ``prompt`` on an image model (docs: Media).

        ``size`` is ``"WIDTHxHEIGHT"``; ``quality`` (``"low"`` / ``"medium"`` /
        ``"high"``), ``output_format`` (``"png"`` / ``"jpeg"`` / ``"webp"``) and
        ``seed`` are mapped to the vendor's own, and refused typed where the
        model does not take them; ``vendor={"openai": {...}}`` adds its fields.
        """
        from . import images

        return images.generate_image(
            self,
            prompt,
            model=model,
            size=size,
            n=n,
            quality=quality,
            output_format=output_format,
            seed=seed,
            vendor=vendor,
            deadline=deadline,
        )

    async def agenerate_image(
        self: RunSettings,
        prompt: str,
        *,
        model: str | None = None,
        size: str | None = None,
        n: int = 1,
        quality: ImageQuality | None = None,
        output_format: ImageFormat | None = None,
        seed: int | None = None,
        vendor: Mapping[str, Mapping[str, Any]] | None = None,
        deadline: float | None = None,
    ) -> Images:
        """Async :meth:`generate_image`; same parameters, same request."""
        from . import images

        return await images.agenerate_image(
            self,
            prompt,
            model=model,
            size=size,
            n=n,
            quality=quality,
            output_format=output_format,
            seed=seed,
            vendor=vendor,
            deadline=deadline,
        )
