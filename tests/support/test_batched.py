"""Group commit: calls that arrive together share one run, each gets its own result."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from telesnap.support.batched import Batched


class Recorder:
    def __init__(self) -> None:
        self.runs: list[list[int]] = []
        self.release = asyncio.Event()
        self.release.set()
        self.fail_next = False

    async def run(self, items: Sequence[int]) -> list[int]:
        self.runs.append(list(items))
        await self.release.wait()
        if self.fail_next:
            self.fail_next = False
            raise ConnectionError("database unreachable")
        return [item * 10 for item in items]


async def test_calls_made_while_a_batch_runs_share_the_next_one() -> None:
    recorder = Recorder()
    batched = Batched(recorder.run)
    recorder.release.clear()
    first = asyncio.create_task(batched.add(1))
    await asyncio.sleep(0)  # the first batch starts with the first call alone
    await asyncio.sleep(0)
    later = [asyncio.create_task(batched.add(n)) for n in (2, 3, 4)]
    await asyncio.sleep(0)
    recorder.release.set()
    assert await first == 10
    assert [await task for task in later] == [20, 30, 40]
    assert recorder.runs == [[1], [2, 3, 4]]


async def test_a_failed_batch_fails_its_calls_only() -> None:
    recorder = Recorder()
    batched = Batched(recorder.run)
    recorder.fail_next = True
    results = await asyncio.gather(batched.add(1), batched.add(2), return_exceptions=True)
    assert [type(result) for result in results] == [ConnectionError, ConnectionError]
    assert await batched.add(3) == 30, "the next batch runs as usual"


async def test_a_caller_that_gives_up_leaves_its_item_in_the_batch() -> None:
    recorder = Recorder()
    batched = Batched(recorder.run)
    recorder.release.clear()
    waiting = asyncio.create_task(batched.add(1))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    recorder.release.set()
    assert await batched.add(2) == 20
    assert recorder.runs == [[1], [2]], "the item given up was run all the same"
