"""Reading a file of records as a stream, in bounded memory, with every problem located.

Three layouts, told apart by the content:

* **JSON Lines** — the first non-blank line is a whole JSON value: every line is one record (a
  line holding a list gives its elements; a τ² results object gives its simulations).
* **a JSON array** — its elements are records, decoded one at a time from a sliding buffer,
  however long the file.
* **a JSON object** — a τ² results file (``{"info", "tasks", "simulations": [...]}``): the
  ``simulations`` are streamed like an array; any other object is one record.

A record that cannot be read is a :class:`~groundeval.trajectories.model.ReadProblem` (file,
line, record index, what is wrong) and reading goes on: at the next line of a JSON Lines file;
in an array, at the next element that starts at the indentation the broken one started at
(pretty-printed files, the usual case) — when there is none, the problem says the rest of the
array was not read. A truncated file yields every complete record before the cut, then one
problem naming where the cut is.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import GroundevalError
from .model import Location, ReadProblem

__all__ = ["MAX_RECORD_BYTES", "RawRecord", "expand", "iter_records"]

MAX_RECORD_BYTES = 64 * 1024 * 1024
"""A record (a JSONL line, an array element) longer than this is refused, located."""

CONTAINER_KEYS = ("simulations",)
"""Keys of an object whose list value holds the records (τ² results)."""

_CHUNK = 1 << 20
_DECODER = json.JSONDecoder()
_WS = " \t\r\n"
_NOT_READ = "; the rest of the array is not read (no next record found)"


@dataclass(slots=True)
class RawRecord:
    """One record before it is read as a trajectory: a JSON value and where it starts.

    ``container`` names what held it (``"simulations"`` for a τ² results file), so the shape
    reader knows a τ² simulation even when it lacks the keys that would tell."""

    where: Location
    value: Any
    container: str | None = None
    text: bytes | None = None
    """A JSON Lines record not decoded yet (``lazy`` reading): :func:`expand` decodes it."""
    agent: str | None = None
    """The agent of the τ² results file that held it (``info.agent_info.implementation``, when
    the file's ``info`` comes before its ``simulations``, as τ²'s runner writes it): τ²'s solo
    agent calls the user's tools itself."""


NO_RECORDS = "the file holds no records"  # an empty or blank file, an empty list or τ² results without simulations


def holds_no_records(item: RawRecord | ReadProblem) -> bool:
    """Whether ``item`` is :func:`iter_records`' one problem for a file with nothing in it."""
    return isinstance(item, ReadProblem) and item.message == NO_RECORDS and item.where.line is None


def iter_records(path: str | Path, *, lazy: bool = False) -> Iterator[RawRecord | ReadProblem]:
    """Every record of ``path`` in file order, and a located problem wherever one cannot be read.
    A file with nothing to read (empty, blank, ``[]``) gives one problem, :data:`NO_RECORDS`,
    and nothing else: it is not a file of zero trajectories that all passed.

    ``lazy``: JSON Lines records come undecoded (their bytes), for :func:`expand` to decode where
    the work is done; the other layouts are decoded here (their records' ends are found by
    decoding them)."""
    anything = False
    for item in _records(Path(path), lazy):
        anything = True
        yield item
    if not anything:
        yield ReadProblem(Location(str(path)), NO_RECORDS)


def _records(p: Path, lazy: bool) -> Iterator[RawRecord | ReadProblem]:
    name = str(p)
    try:
        fh = open(p, "rb")
    except OSError as exc:
        yield ReadProblem(Location(name), f"cannot read: {exc.strerror or exc}")
        return
    with fh:
        first = _first_line(fh)
        if first is None:
            return  # iter_records says so
        try:
            text = first.decode("utf-8")
            json.loads(text)
            is_lines = True
        except (UnicodeDecodeError, ValueError, RecursionError):
            is_lines = False
        fh.seek(0)
        if is_lines:
            yield from _iter_lines(fh, name, lazy)
        else:
            yield from _Document(fh, name).records()


def _first_line(fh: BinaryIO) -> bytes | None:
    while True:
        line = fh.readline(MAX_RECORD_BYTES + 1)
        if not line:
            return None
        if not line.isspace():
            return line


# --------------------------------------------------------------------------- JSON Lines


def _iter_lines(fh: BinaryIO, name: str, lazy: bool) -> Iterator[RawRecord | ReadProblem]:
    """One record per non-blank line; ``lazy``: the line's bytes, decoded later by :func:`expand`
    (in a worker process), else decoded here — the same records and locations either way. The
    index of a record is its line's among the non-blank lines; the elements of a line that holds
    several records (a list, a τ² results object) share it and are told apart by ``item``."""
    index = 0
    n = 0
    while True:
        line = fh.readline(MAX_RECORD_BYTES + 1)
        if not line:
            return
        n += 1
        if len(line) > MAX_RECORD_BYTES and not line.endswith(b"\n"):
            while True:  # skip the rest of the over-long line without holding it
                rest = fh.readline(_CHUNK)
                if not rest or rest.endswith(b"\n"):
                    break
            yield ReadProblem(Location(name, n, index), f"line longer than {MAX_RECORD_BYTES} bytes")
            index += 1
            continue
        if line.isspace():
            continue
        raw = RawRecord(Location(name, n, index), None, text=line)
        index += 1
        if lazy:
            yield raw
        else:
            yield from expand(raw)


def expand(raw: RawRecord) -> list[RawRecord | ReadProblem]:
    """The records of a lazily read line (:func:`iter_records` with ``lazy=True``); a record
    already decoded is returned as it is."""
    if raw.text is None:
        return [raw]
    line, where = raw.text, raw.where
    try:
        value = json.loads(line)
    except UnicodeDecodeError as exc:
        return [ReadProblem(where, f"not UTF-8 text (byte {exc.start} of the line)")]
    except json.JSONDecodeError as exc:
        at_end = exc.pos >= len(line.rstrip()) - 6 or exc.msg.startswith("Unterminated")
        cut = at_end and not line.endswith(b"\n")
        what = "truncated: the last line ends inside a record" if cut else f"invalid JSON: {exc.msg}"
        return [ReadProblem(where, f"{what} (column {exc.colno})")]
    except RecursionError:
        return [ReadProblem(where, "nested too deeply to be read")]
    if isinstance(value, dict):
        key = _container_key(value)
        if key is not None:
            agent = tau2_agent(value)
            return [
                RawRecord(Location(where.file, where.line, where.index, i), item, key, agent=agent)
                for i, item in enumerate(value[key])
            ]
    if isinstance(value, list) and not _is_message_list(value):
        return [RawRecord(Location(where.file, where.line, where.index, i), item) for i, item in enumerate(value)]
    return [RawRecord(where, value)]


def tau2_agent(results: dict[str, Any]) -> str | None:
    """``info.agent_info.implementation`` of a τ² results object (``llm_agent``, ``llm_agent_solo``, ...)."""
    info = results.get("info")
    agent = info.get("agent_info") if isinstance(info, dict) else None
    impl = agent.get("implementation") if isinstance(agent, dict) else None
    return impl if isinstance(impl, str) else None


def _container_key(value: dict[str, Any]) -> str | None:
    for key in CONTAINER_KEYS:
        if isinstance(value.get(key), list):
            return key
    return None


def _is_message_list(value: list[Any]) -> bool:
    """A list whose first element is a chat message: one trajectory, not a list of records."""
    return bool(value) and isinstance(value[0], dict) and "role" in value[0] and "messages" not in value[0]


# --------------------------------------------------------------------------- one JSON document


class _Cut(GroundevalError):
    """The file ends inside a value."""


class _Broken(GroundevalError):
    def __init__(self, message: str, pos: int):
        super().__init__(message)
        self.message = message
        self.pos = pos


class _Document:
    """A sliding window over one JSON document: values are decoded one at a time with
    :meth:`json.JSONDecoder.raw_decode`; the consumed prefix is dropped, and line numbers are
    counted as the window moves (never from the start again)."""

    def __init__(self, fh: BinaryIO, name: str):
        self.fh = fh
        self.name = name
        self.dec = codecs.getincrementaldecoder("utf-8")("strict")
        self.s = ""
        self.i = 0
        self.eof = False
        self.bytes_read = 0
        self.base = 0  # characters dropped from the window's front so far
        self._line = 1  # line number of position self._line_pos
        self._line_pos = 0

    # -- the window

    def more(self, at_least: int = _CHUNK) -> bool:
        if self.eof:
            return False
        drop = min(self.i, self._line_pos)
        if drop > _CHUNK:
            self.s = self.s[drop:]
            self.i -= drop
            self._line_pos -= drop
            self.base += drop
        b = self.fh.read(max(at_least, _CHUNK))
        try:
            if not b:
                self.s += self.dec.decode(b"", final=True)
                self.eof = True
                return False
            self.s += self.dec.decode(b)
        except UnicodeDecodeError as exc:
            raise _Broken(f"not UTF-8 text (byte offset {self.bytes_read + exc.start})", len(self.s)) from None
        self.bytes_read += len(b)
        return True

    def line_at(self, pos: int) -> int:
        if pos < self._line_pos:  # only while re-reading a broken record's start
            return self._line - self.s.count("\n", pos, self._line_pos)
        self._line += self.s.count("\n", self._line_pos, pos)
        self._line_pos = pos
        return self._line

    def skip_ws(self) -> str:
        """The next non-blank character ('' at the end of the file), not consumed."""
        while True:
            s, i, n = self.s, self.i, len(self.s)
            while i < n and s[i] in _WS:
                i += 1
            self.i = i
            if i < n:
                return s[i]
            if not self.more():
                return ""

    def value(self) -> tuple[Any, int]:
        """The JSON value at the cursor and where it ends (the cursor is left at its start)."""
        while True:
            try:
                v, end = _DECODER.raw_decode(self.s, self.i)
            except json.JSONDecodeError as exc:
                if self.eof:
                    if exc.pos >= len(self.s.rstrip()) - 6 or exc.msg.startswith("Unterminated"):
                        raise _Cut() from None
                    raise _Broken(f"invalid JSON: {exc.msg}", exc.pos) from None
                if exc.pos >= len(self.s) - 8 or exc.msg.startswith("Unterminated"):
                    self._grow()
                    continue
                raise _Broken(f"invalid JSON: {exc.msg}", exc.pos) from None
            except RecursionError:
                raise _Broken("nested too deeply to be read", self.i) from None
            if end >= len(self.s) and not self.eof and not isinstance(v, (dict, list, str)):
                self._grow()  # a number or literal at the window's end may go on
                continue
            return v, end

    def _grow(self) -> None:
        if len(self.s) - self.i > MAX_RECORD_BYTES:
            raise _Broken(f"a record longer than {MAX_RECORD_BYTES} bytes", self.i)
        self.more(at_least=len(self.s) - self.i)

    # -- records

    def records(self) -> Iterator[RawRecord | ReadProblem]:
        try:
            c = self.skip_ws()
        except _Broken as exc:
            yield ReadProblem(Location(self.name, 1), exc.message)
            return
        if c == "[":
            if not (yield from self._array(None)):
                return
        elif c == "{":
            if not (yield from self._object()):
                return
        else:
            yield ReadProblem(Location(self.name, self.line_at(self.i)), "not JSON: expected an array or an object")
            return
        try:
            tail = self.skip_ws()
        except _Broken as exc:
            yield ReadProblem(Location(self.name, self.line_at(min(exc.pos, len(self.s)))), exc.message)
            return
        if tail:
            yield ReadProblem(
                Location(self.name, self.line_at(self.i)), "text after the end of the JSON document (not read)"
            )

    def _where(self, pos: int, index: int | None) -> Location:
        return Location(self.name, self.line_at(min(pos, len(self.s))), index)

    def _array(self, container: str | None, agent: str | None = None) -> Generator[RawRecord | ReadProblem, None, bool]:
        """The array's records; returns whether it was read to its closing bracket.

        An array whose first element is a chat message is one conversation: one record."""
        self.i += 1  # '['
        index = 0
        messages: list[Any] | None = None
        first_line = 0
        try:
            if self.skip_ws() == "]":
                self.i += 1
                return True
        except _Broken as exc:
            yield ReadProblem(self._where(exc.pos, index), exc.message)
            return False
        while True:
            got = self._element(index)
            if isinstance(got, ReadProblem):
                yield got
                if got.message.endswith(_NOT_READ):
                    return False
            else:
                line, v = got
                if index == 0 and container is None and isinstance(v, dict) and "role" in v and "messages" not in v:
                    messages, first_line = [], line
                if messages is not None:
                    messages.append(v)
                else:
                    yield RawRecord(Location(self.name, line, index), v, container, agent=agent)
            index += 1
            if not isinstance(got, ReadProblem):
                status, problem = self._after_element(index)
                if problem is not None:
                    yield problem
                if status != "next":
                    break
        if messages is not None:
            yield RawRecord(Location(self.name, first_line, 0), messages, container)
        return status == "closed"

    def _element(self, index: int) -> tuple[int, Any] | ReadProblem:
        """The element at the cursor with its line, or its problem (the cursor then at the next
        element when one is found again; else the message ends with :data:`_NOT_READ`)."""
        try:
            self.skip_ws()
        except _Broken as exc:
            return ReadProblem(self._where(exc.pos, index), exc.message + _NOT_READ)
        start = self.i
        line = self.line_at(start)
        try:
            v, end = self.value()
        except _Cut:
            return ReadProblem(
                Location(self.name, line, index),
                "truncated: the file ends inside this record (the records before it were read)" + _NOT_READ,
            )
        except _Broken as exc:
            at = self.line_at(min(exc.pos, len(self.s)))
            found = self._resync(start)
            return ReadProblem(Location(self.name, at, index), exc.message + ("" if found else _NOT_READ))
        self.i = end
        return line, v

    def _after_element(self, index: int) -> tuple[str, ReadProblem | None]:
        """After an element: ``next`` (a comma), ``closed`` (the bracket) or ``stop``."""
        try:
            c = self.skip_ws()
        except _Broken as exc:
            return "stop", ReadProblem(self._where(exc.pos, index), exc.message)
        if c == ",":
            self.i += 1
            return "next", None
        if c == "]":
            self.i += 1
            return "closed", None
        if c == "":
            return "stop", ReadProblem(
                self._where(self.i, index),
                "truncated: the file ends before the array is closed (the records before were read)",
            )
        problem = ReadProblem(self._where(self.i, index), f"invalid JSON: expected ',' or ']', found {c!r}")
        return ("next" if self._resync(self.i) else "stop"), problem

    def _resync(self, start: int) -> bool:
        """Move to the next element that starts at the indentation the broken one started at
        (its line's own indentation: ``\\n`` + the same blanks + ``{``)."""
        line_start = self.s.rfind("\n", 0, start) + 1
        indent = self.s[line_start:start]
        if indent.strip(" \t"):
            return False  # the broken element did not start its line: no landmark to find
        mark = "\n" + indent + "{"
        abs_start = self.base + start
        abs_at = abs_start + 1
        while True:
            j = self.s.find(mark, abs_at - self.base)
            if j >= 0:
                self.i = j + len(mark) - 1
                return True
            abs_at = self.base + max(0, len(self.s) - len(mark))
            if self.base + len(self.s) - abs_start > MAX_RECORD_BYTES:
                return False
            self.i = abs_at - self.base  # what is before it may be dropped from the window
            self.line_at(self.i)
            try:
                if not self.more():
                    return False
            except _Broken:
                return False

    def _object(self) -> Generator[RawRecord | ReadProblem, None, bool]:
        begin_line = self.line_at(self.i)
        self.i += 1  # '{'
        kept: dict[str, Any] = {}
        streamed = False
        try:
            while True:
                c = self.skip_ws()
                if c == "}":
                    self.i += 1
                    break
                if c == "":
                    raise _Cut()
                key, end = self.value()
                if not isinstance(key, str):
                    raise _Broken("invalid JSON: expected a key", self.i)
                self.i = end
                if self.skip_ws() != ":":
                    raise _Broken("invalid JSON: expected ':'", self.i)
                self.i += 1
                c = self.skip_ws()
                if key in CONTAINER_KEYS and c == "[":
                    streamed = True
                    if not (yield from self._array(key, tau2_agent(kept))):
                        return False  # its problem is told; what follows it cannot be trusted
                else:
                    v, end = self.value()
                    self.i = end
                    kept[key] = v
                c = self.skip_ws()
                if c == ",":
                    self.i += 1
                elif c == "}":
                    self.i += 1
                    break
                elif c == "":
                    raise _Cut()
                else:
                    raise _Broken(f"invalid JSON: expected ',' or '}}', found {c!r}", self.i)
        except _Cut:
            yield ReadProblem(Location(self.name, begin_line), "truncated: the file ends inside the JSON object")
            return False
        except _Broken as exc:
            yield ReadProblem(Location(self.name, self.line_at(min(exc.pos, len(self.s)))), exc.message)
            return False
        if not streamed:
            yield RawRecord(Location(self.name, begin_line, 0), kept)
        return True
