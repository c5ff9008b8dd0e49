"""Permission policy: rules (``rules.py``, ``user_rules.py``), shell parsing (``shell_parse.py`` and its
``shell_*.py`` parts), the engine that judges tool calls (``engine.py``) and the files a command names
(``operand_checks.py``), and approvals written to the user config (``approvals.py``). The sandbox
commands run in is below, in ``workspace/sandbox.py`` (docs/architecture.md)."""
