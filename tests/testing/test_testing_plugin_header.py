"""The gate's items are collected like any test: pytest's header counts them, and
-k / -m deselection is reported against them (issue 17: "collected 3 items / 3
deselected / 0 selected" and then 23 items ran)."""

from __future__ import annotations

import re

import pytest

import groundeval.store.store  # noqa: F401  (native modules loaded before pytester snapshots sys.modules)

pytest_plugins = ["pytester"]

USER_TESTS = """
def test_one():
    pass

def test_two():
    pass

def test_three():
    pass
"""


def _header(result: pytest.RunResult) -> str:
    return next(line for line in result.outlines if line.startswith("collected "))


def test_header_counts_the_gate_items_that_run(pytester: pytest.Pytester):
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider"\n')
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest("--groundeval=tiny", "--groundeval-agent=oracle", "-m", "groundeval", "-rA")
    ran = len([r for r in result.reprec.getreports("pytest_runtest_logreport") if r.when == "call"])
    skipped_at_setup = len(
        [r for r in result.reprec.getreports("pytest_runtest_logreport") if r.when == "setup" and r.skipped]
    )
    total = ran + skipped_at_setup
    assert total > 10  # one item per question of the tiny pack, plus the track and baseline items
    header = _header(result)
    assert header == f"collected {total + 3} items / 3 deselected / {total} selected", header
    assert result.ret == pytest.ExitCode.OK


def test_header_without_selection_counts_user_and_gate_items(pytester: pytest.Pytester):
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider"\n')
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest("--groundeval=tiny", "--groundeval-agent=oracle", "-k", "silence")
    header = _header(result)
    m = re.fullmatch(r"collected (\d+) items / (\d+) deselected / (\d+) selected", header)
    assert m, header
    collected, deselected, selected = map(int, m.groups())
    outcomes = result.parseoutcomes()
    assert selected == sum(outcomes.get(k, 0) for k in ("passed", "skipped", "failed")) > 0
    assert collected == selected + deselected
