"""The model clients: one module per wire API, imported when its wire API is chosen (``resolution``).

``httpx`` imports its command-line client (``httpx._main``, which loads click, rich and pygments when
they are installed: about 45 ms of start-up on the benchmark machine) from its ``__init__``; agent-ls never
uses it. A ``None`` entry in ``sys.modules`` makes that import fail as a missing module would, which
httpx handles (its ``main()`` then says to install ``httpx[cli]``). docs/benchmarks.md, "Start-up".
"""

from __future__ import annotations

import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
