"""``python -m llmport.cli``: the same as the ``llmport`` command."""

from .main import main

raise SystemExit(main())
