"""``assembly.start_when_idle``: a session's own secret index starts walking once the run waits, not
while it builds its first request (issue 16, "Fast to start")."""

from __future__ import annotations

import asyncio

from agent_ls.assembly import start_when_idle


def test_without_an_event_loop_the_job_starts_at_once() -> None:
    started: list[str] = []

    start_when_idle(lambda: started.append("index"))

    assert started == ["index"]


def test_inside_a_run_the_job_waits_until_the_run_first_waits() -> None:
    order: list[str] = []

    async def run() -> None:
        start_when_idle(lambda: order.append("index"))
        order.append("building the first request")  # no await yet: the loop has not run anything
        await asyncio.sleep(0)  # the request is on its way: the loop is free
        order.append("waiting on the model")

    asyncio.run(run())

    assert order == ["building the first request", "index", "waiting on the model"]
