"""τ² tool modules draw ``uuid4()`` from the adapter's counter (``worlds/tau2/state.py``). An
episode sets the counter to its own count before a tool call and reads it back after; episodes
run at once on threads, so the counter must be the calling thread's. Needs no τ² install."""

from __future__ import annotations

import threading

from groundeval.worlds.tau2.state import deterministic_ids


def _draw_alone(start: int) -> tuple[str, int]:
    deterministic_ids.n = start
    return str(deterministic_ids.uuid4()), deterministic_ids.n


def test_two_episodes_on_threads_draw_their_own_ids_while_both_are_inside_a_tool_call():
    starts = {"a": 3, "b": 40}
    expected = {k: _draw_alone(v) for k, v in starts.items()}
    inside = threading.Barrier(2)
    got: dict[str, tuple[str, int]] = {}

    def episode(key: str) -> None:
        deterministic_ids.n = starts[key]  # what Tau2EpisodeState.run does before the call
        inside.wait()  # both episodes have set their count: the other's set came after this one's
        ident = str(deterministic_ids.uuid4())  # the tool draws an id
        got[key] = (ident, deterministic_ids.n)  # and the episode keeps the count after it

    threads = [threading.Thread(target=episode, args=(k,)) for k in starts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == expected
    assert expected["a"][0] != expected["b"][0]  # different counts give different ids: a real check


def test_the_counter_gives_the_same_ids_from_the_same_count_and_resets_per_thread():
    deterministic_ids.reset()
    first = [str(deterministic_ids.uuid4()) for _ in range(3)]
    deterministic_ids.reset()
    assert [str(deterministic_ids.uuid4()) for _ in range(3)] == first
    assert len(set(first)) == 3
    seen: list[int] = []
    t = threading.Thread(target=lambda: seen.append(deterministic_ids.n))
    t.start()
    t.join()
    assert seen == [0]  # a new thread starts from zero, whatever this one drew
    assert deterministic_ids.uuid4().version == 4
