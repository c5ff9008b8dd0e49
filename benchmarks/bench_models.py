"""Reproducible measurements of the model layer (issue 4), each against a baseline measured in the same run.

Run from the repository root with the dev install:  .venv/bin/python benchmarks/bench_models.py [--repeat N]

Measures:
- cancel latency of a stream held open by the server: ``task.cancel()`` → the ``complete`` task done
  (baseline: cancelling a task blocked in ``asyncio.sleep``, the floor of asyncio cancellation);
- the cost of streaming: one 2,000-character answer with a tool call read as 262 SSE events vs the
  same answer as one JSON body, from the same fake server on 127.0.0.1, run in its own process (as a
  model server is): in a thread of this process its 262 writes and the client's reads take turns at
  the GIL, which moved the ratio between 1.9x and 6x from run to run of the same code (2.9-3.2x in
  its own process, load 1).
Results are medians; machines here are noisy, so compare ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from asyncio.subprocess import PIPE
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.model_server import FakeModelServer  # noqa: E402
from tests.support.wire_formats import render_chat  # noqa: E402

from agent_ls.core.messages import ToolSpec, UserMessage  # noqa: E402
from agent_ls.models.base import WireConfig  # noqa: E402
from agent_ls.models.openai_chat import OpenAIChatClient  # noqa: E402

READ = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}})


async def _cancel_once(server: FakeModelServer) -> float:
    client = OpenAIChatClient(WireConfig(model="bench", base_url=server.base_url, stream=True))
    seen = asyncio.Event()
    task = asyncio.create_task(client.complete([UserMessage("go")], [], lambda _event: seen.set()))
    await asyncio.wait_for(seen.wait(), 10)
    started = time.perf_counter()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    elapsed = time.perf_counter() - started
    await client.aclose()
    return elapsed


async def _sleep_cancel_once() -> float:
    task = asyncio.create_task(asyncio.sleep(3600))
    await asyncio.sleep(0)
    started = time.perf_counter()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    return time.perf_counter() - started


async def cancel_latency(repeat: int) -> dict[str, Any]:
    chunks = render_chat_step({"content": "Once upon a time"}, stream=True)[:3]
    with FakeModelServer([{"chunks": chunks, "end": "hang"} for _ in range(repeat)]) as server:
        stream = [await _cancel_once(server) for _ in range(repeat)]
    floor = [await _sleep_cancel_once() for _ in range(repeat)]
    return {"stream_cancel_ms": _ms(stream), "sleep_cancel_ms": _ms(floor)}


def render_chat_step(step: dict[str, Any], stream: bool) -> list[str]:
    from tests.support.model_server import ServerStep

    return render_chat(ServerStep.model_validate(step), 1, "bench", 100, stream)[1]


STREAMED_STEP = {
    "content": "x" * 2000,
    "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a" * 40}}],
}


def serve(steps: int) -> None:
    """``--serve N``: serve ``STREAMED_STEP`` N times, print the base URL, stop when stdin closes."""
    with FakeModelServer([STREAMED_STEP] * steps) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()


async def streaming_cost(repeat: int) -> dict[str, Any]:
    timings: dict[bool, list[float]] = {True: [], False: []}
    server = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--serve", str(2 * repeat), stdin=PIPE, stdout=PIPE
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        base_url = (await server.stdout.readline()).decode().strip()
        for stream in (False, True) * repeat:
            client = OpenAIChatClient(WireConfig(model="bench", base_url=base_url, stream=stream))
            started = time.perf_counter()
            await client.complete([UserMessage("go")], [READ], lambda _event: None)
            timings[stream].append(time.perf_counter() - started)
            await client.aclose()
    finally:
        server.stdin.close()
        await server.wait()
    chunks = len(render_chat_step(STREAMED_STEP, stream=True))
    return {"chunks": chunks, "streamed_ms": _ms(timings[True]), "json_ms": _ms(timings[False])}


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


async def main_async(repeat: int) -> None:
    cancel = await cancel_latency(repeat)
    cost = await streaming_cost(repeat)
    print(
        f"cancel a held stream: {cancel['stream_cancel_ms']} ms "
        f"(baseline: cancel a sleeping task {cancel['sleep_cancel_ms']} ms, "
        f"ratio {cancel['stream_cancel_ms'] / max(cancel['sleep_cancel_ms'], 1e-6):.0f}x)"
    )
    print(
        f"one answer as {cost['chunks']} SSE events: {cost['streamed_ms']} ms "
        f"(baseline: the same answer as one JSON body {cost['json_ms']} ms, "
        f"ratio {cost['streamed_ms'] / max(cost['json_ms'], 1e-6):.2f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)  # the server process of streaming_cost
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
    else:
        asyncio.run(main_async(args.repeat))


if __name__ == "__main__":
    main()
