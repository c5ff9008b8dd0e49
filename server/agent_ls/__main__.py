"""``python -m agent_ls``: the same entry point as the ``agent-ls`` console script."""

from __future__ import annotations

from agent_ls.cli import main

raise SystemExit(main())
