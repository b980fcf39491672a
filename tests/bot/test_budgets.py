"""A moving window: a budget's hits are counted for its seconds, then given back."""

from __future__ import annotations

from telesnap.bot.ingress.budgets import SWEEP_EVERY, Budget, MovingWindows


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_key_has_its_count_in_any_window_and_each_hit_is_given_back_when_it_leaves() -> None:
    clock = Clock()
    windows = MovingWindows(Budget(3, 10.0), clock=clock)
    assert [windows.hit("ann") for _ in range(4)] == [True, True, True, False]
    assert windows.hit("bob")
    clock.now += 9.9
    assert not windows.has_room("ann")
    clock.now += 0.2  # the first three leave the window together
    assert windows.has_room("ann")
    assert [windows.hit("ann") for _ in range(4)] == [True, True, True, False]


def test_has_room_counts_nothing() -> None:
    windows = MovingWindows(Budget(1, 10.0), clock=Clock())
    assert all(windows.has_room("ann") for _ in range(5))
    assert windows.hit("ann")
    assert not windows.has_room("ann")


def test_keys_whose_window_emptied_are_forgotten() -> None:
    clock = Clock()
    windows = MovingWindows(Budget(5, 1.0), clock=clock)
    for user in range(SWEEP_EVERY - 1):
        windows.hit(user)
    clock.now += 2.0
    windows.hit("last")  # the sweep comes with this hit
    assert windows.has_room(0)
    assert len(windows._hits) == 1
