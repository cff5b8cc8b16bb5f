"""The ``llmport`` command line.

The entry point and its subcommands (:mod:`.main`), ``session show``/``list``
(:mod:`.session`) and ``demo`` (:mod:`.demo`). Plugins add subcommands through
the ``llmport_register_commands`` hook.
"""
