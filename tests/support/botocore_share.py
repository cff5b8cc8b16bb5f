"""One botocore data loader shared by every boto3 session of the test session.

Each Bedrock provider builds a boto3 session, which would parse botocore's
service and endpoint JSON again (~0.3 s a client, hundreds of clients in the
suite); the loader only caches those read-only files, so sharing it changes
nothing but the time. Under pytest-xdist each worker shares its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


@contextmanager
def one_botocore_loader() -> Iterator[None]:
    """While open, ``botocore.session.create_loader`` hands out one loader per search path."""
    import botocore.loaders
    import botocore.session

    loaders: dict[Any, Any] = {}

    def shared(search_path: Any = None) -> Any:
        if search_path not in loaders:
            loaders[search_path] = botocore.loaders.create_loader(search_path)
        return loaders[search_path]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(botocore.session, "create_loader", shared)
        yield
