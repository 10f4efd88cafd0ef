"""Ctrl-C that a library turns into an error of its own is still an abort: exit 130, "aborted",
no traceback. pydantic-core turns a KeyboardInterrupt that lands while a model class is built
into a ``SchemaError`` (seen when Ctrl-C hit ``info`` during its imports); DuckDB turns one into
``Query interrupted``. The CLI notes that its SIGINT handler ran, whatever error follows."""

from __future__ import annotations

import os
import signal

import pytest

import groundeval.cli.info as info_command
from groundeval.cli.main import main


class LibraryError(Exception):
    """An error a library raises in place of the KeyboardInterrupt it caught (no cause kept)."""


def _interrupted_inside_a_library(*args, **kwargs):
    try:
        os.kill(os.getpid(), signal.SIGINT)  # the handler runs here, in the main thread
    except KeyboardInterrupt:
        pass
    raise LibraryError("Error building validator: KeyboardInterrupt")


def _fails_on_its_own(*args, **kwargs):
    raise LibraryError("a real bug")


def test_an_interrupt_turned_into_another_error_exits_130(monkeypatch, capsys):
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    monkeypatch.setattr(info_command, "open_pack", _interrupted_inside_a_library)
    with pytest.raises(SystemExit) as exc:
        main(["info", "tiny"])
    assert exc.value.code == 130
    err = capsys.readouterr().err
    assert "aborted" in err and "Traceback" not in err
    signal.signal(signal.SIGINT, signal.default_int_handler)  # _aborted ignores further Ctrl-C


def test_the_same_error_without_an_interrupt_is_still_raised_and_the_handler_restored(monkeypatch):
    monkeypatch.setattr(info_command, "open_pack", _fails_on_its_own)
    with pytest.raises(LibraryError):
        main(["info", "tiny"])
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    main(["packs"])  # a finished command leaves Python's own handler in place
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
