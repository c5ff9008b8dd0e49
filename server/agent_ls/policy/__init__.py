"""Permission policy: rules (``rules.py``, ``user_rules.py``), shell parsing (``shell_parse.py``), the
engine that judges tool calls (``engine.py``), approvals written to the user config (``approvals.py``),
and the sandbox commands run in (``sandbox.py``)."""
