"""Fake LLM benchmarks: time to first chunk and NDJSON throughput on loopback.

Run: `python -m bench.bench_fakellm [--rounds N]`. The server runs the way the
harness runs it (`FakeLLMThread`, its own loop and thread); the client is a raw
asyncio socket speaking HTTP/1.1, so client-library overhead does not blur the
figures. Prints medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from parity.fakellm.thread import FakeLLMThread
from parity.scenario.model import DEFAULT_CATALOG

STREAM = json.dumps({"messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}]})
CHAT = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]})


def _request(host: str, port: int, path: str, body: str) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n{body}"
    ).encode()


async def _one(
    host: str, port: int, path: str, last: bytes, body: str = STREAM
) -> tuple[float, float, int]:
    """One request on a fresh connection: (time to first body byte, total time, bytes)."""
    reader, writer = await asyncio.open_connection(host, port)
    start = time.perf_counter()
    writer.write(_request(host, port, path, body))
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:80]
    first = 0.0
    received = 0
    tail = b""
    while True:
        data = await reader.read(1 << 16)
        if not data:
            break
        if not first:
            first = time.perf_counter() - start
        received += len(data)
        tail = (tail + data)[-64:]
        if last in tail:
            break
    total = time.perf_counter() - start
    writer.close()
    await writer.wait_closed()
    return first, total, received


async def _bench(fake: FakeLLMThread, rounds: int, chars: int) -> dict[str, Any]:
    host, port = fake.url.removeprefix("http://").split(":")
    # time to first chunk: a short text reply, one request per round
    run = fake.open_run(
        "ttfc", llm=[{"text": "hello there"}] * rounds, tools=[], catalog=DEFAULT_CATALOG
    )
    path = run.base_url.split(fake.url, 1)[1] + "/stream"
    firsts = [(await _one(host, int(port), path, b'"finish"'))[0] for _ in range(rounds)]
    # throughput: one long reply, one chunk per character
    text = "".join(chr(ord("a") + i % 26) for i in range(chars))
    repeats = 5
    run = fake.open_run("tput", llm=[{"text": text}] * repeats, tools=[], catalog=DEFAULT_CATALOG)
    path = run.base_url.split(fake.url, 1)[1] + "/stream"
    chunks = chars + 3  # block-start, one delta per char, block-end, finish
    rates = []
    for _ in range(repeats):
        _, total, _ = await _one(host, int(port), path, b'"finish"')
        rates.append(chunks / total)
    # the same script as OpenAI chat SSE (what qwen-code and opencode read)
    run = fake.open_run("chat", llm=[{"text": text}] * repeats, tools=[], catalog=DEFAULT_CATALOG)
    path = run.base_url.split(fake.url, 1)[1] + "/v1/chat/completions"
    sse_rates = []
    for _ in range(repeats):
        _, total, _ = await _one(host, int(port), path, b"[DONE]", CHAT)
        sse_rates.append(chunks / total)
    return {
        "ttfc_median_ms": statistics.median(firsts) * 1000,
        "ttfc_p95_ms": sorted(firsts)[int(0.95 * (len(firsts) - 1))] * 1000,
        "chunks_per_s_median": statistics.median(rates),
        "chat_chunks_per_s_median": statistics.median(sse_rates),
        "rounds": rounds,
        "chunks_per_stream": chunks,
    }


def main(argv: list[str] | None = None) -> None:
    """Run the benchmarks and print the medians."""
    parser = argparse.ArgumentParser(prog="python -m bench.bench_fakellm")
    parser.add_argument("--rounds", type=int, default=200, help="requests for time to first chunk")
    parser.add_argument("--chars", type=int, default=100_000, help="chunks per throughput stream")
    args = parser.parse_args(argv)
    with FakeLLMThread() as fake:
        result = asyncio.run(_bench(fake, args.rounds, args.chars))
    print(
        f"fakellm time to first chunk: median {result['ttfc_median_ms']:.3f} ms "
        f"(p95 {result['ttfc_p95_ms']:.3f} ms, {result['rounds']} requests, goal <= 2 ms)"
    )
    print(
        f"fakellm NDJSON throughput: median {result['chunks_per_s_median']:,.0f} chunks/s "
        f"({result['chunks_per_stream']:,} chunks per stream, 5 streams, goal >= 20,000)"
    )
    print(
        f"fakellm chat SSE throughput: median {result['chat_chunks_per_s_median']:,.0f} "
        "script chunks/s (same script as OpenAI chat-completion chunks, 5 streams)"
    )


if __name__ == "__main__":
    main()
