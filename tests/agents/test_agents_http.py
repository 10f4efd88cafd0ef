"""The JSON client against a real local server: retries, Retry-After, fatal errors, timeouts."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundeval.agents.http import JsonClient, ProviderError, RetryPolicy, retry_after_seconds


def _client(url: str, sleeps: list[float], **kw) -> JsonClient:
    return JsonClient(url, timeout=kw.pop("timeout", 5.0), policy=RetryPolicy(**kw), sleep=sleeps.append)


def test_429_then_success_honours_retry_after(scripted_server):
    scripted_server.add(
        (429, {"Retry-After": "7"}, {"error": {"message": "slow down"}}),
        (503, {}, {"error": "busy"}),
        (200, {}, {"ok": True}),
    )
    sleeps: list[float] = []
    body, info = _client(scripted_server.url, sleeps, retries=3, base_delay=0.25).post("x", {"a": 1})
    assert body == {"ok": True}
    assert info == {"attempts": 3, "retries": 2}
    assert sleeps[0] == 7.0  # the server's Retry-After wins over backoff
    assert 0.25 <= sleeps[1] <= 0.5  # attempt 1 backoff: 0.5 s with jitter in [0.5, 1] x
    assert [r[2] for r in scripted_server.requests] == [{"a": 1}] * 3


def test_gives_up_after_retries(scripted_server):
    scripted_server.add(*[(500, {}, {"error": "down"})] * 3)
    sleeps: list[float] = []
    with pytest.raises(ProviderError) as err:
        _client(scripted_server.url, sleeps, retries=2).post("x", {})
    assert "3 attempts" in str(err.value) and not err.value.fatal
    assert len(sleeps) == 2 and len(scripted_server.requests) == 3


@pytest.mark.parametrize("status,fatal", [(401, True), (404, True), (400, False)])
def test_client_errors_are_not_retried(scripted_server, status, fatal):
    scripted_server.add((status, {}, {"error": {"message": "nope"}}))
    with pytest.raises(ProviderError) as err:
        _client(scripted_server.url, [], retries=3).post("x", {})
    assert err.value.status == status and err.value.fatal is fatal and "nope" in str(err.value)
    assert len(scripted_server.requests) == 1


def test_deadline_stops_backoff(scripted_server):
    scripted_server.add((429, {"Retry-After": "60"}, {}))
    with pytest.raises(ProviderError, match="deadline"):
        _client(scripted_server.url, [], retries=3).post("x", {}, deadline=time.monotonic() + 2)
    assert len(scripted_server.requests) == 1


def test_connection_refused_is_retried_then_reported():
    sleeps: list[float] = []
    with pytest.raises(ProviderError, match="cannot connect to http://127.0.0.1:9: connection refused") as err:
        _client("http://127.0.0.1:9", sleeps, retries=1).post("x", {})
    assert len(sleeps) == 1
    assert err.value.fatal  # never reached: a configuration error that stops the run


def test_http_errors_name_the_status_and_server(scripted_server):
    scripted_server.add((503, {}, {"error": {"message": "overloaded"}}))
    with pytest.raises(ProviderError) as err:
        _client(scripted_server.url, [], retries=0).post("x", {})
    assert str(err.value) == f"gave up after 1 attempts: HTTP 503 from {scripted_server.url}: overloaded"
    assert err.value.status == 503 and not err.value.fatal  # it answered: a later episode may succeed


def test_retry_after_http_date():
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0
    assert retry_after_seconds("garbage") is None and retry_after_seconds(None) is None


@given(st.integers(0, 10), st.floats(0.01, 5), st.floats(0.1, 100))
def test_backoff_bounded(attempt, base, cap):
    delay = RetryPolicy(base_delay=base, max_delay=cap).delay(attempt, None)
    assert 0 < delay <= cap
    assert delay <= base * 2**attempt
