"""Bulk ingestion of events and artifacts into DuckDB, validated set-wise in SQL.

Records are read as raw JSON text with their source file and line, checked with
set-based queries (one pass per rule, not one Python call per record), and only
then typed into the final tables. Every problem carries file, line and field.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from ..contract.outside import outside, refusal
from ..errors import ContractError, Problem
from .memory import release_freed_memory

MAX_PROBLEMS = 50

# Artifact keys that are not text to search.
RESERVED_ARTIFACT_KEYS = ("id", "subsystem", "timestamp", "created_at", "date", "visibility", "title", "actors")


def _lines_sql(source: str) -> str:
    """Rows (file, line, text) for every non-blank line of the JSONL files in ``source``.

    Exact but single-threaded; :func:`stage_jsonl` uses it when the fast reader cannot
    guarantee line numbers (carriage returns in the file, or a reader error).
    """
    # Lines by index into the split list: unnesting the list itself took time quadratic in
    # the line count (1M lines: 138 s CPU; by index 3 s).
    return f"""
        SELECT filename AS file, line, rtrim(arr[line], chr(13)) AS text
        FROM (SELECT filename, string_split(content, chr(10)) AS arr FROM read_text({source})) s,
             LATERAL (SELECT unnest(range(1, len(s.arr) + 1)) AS line)
        WHERE trim(arr[line]) <> ''
        ORDER BY file, line
    """


# One JSONL line (an event or artifact record) may hold at most this many bytes: a longer one is a
# located error found while counting lines, before any reader holds it whole (DuckDB's readers
# cost several times a line's size).
MAX_JSONL_LINE_BYTES = 64 * 1024 * 1024
_CHUNK = 1 << 24  # counting reads this much at a time: a line within one chunk is shorter than the cap


def _newline_count(path: Path) -> tuple[int, bool, bool]:
    """Newlines in the file, whether it holds a carriage return, whether it ends with a newline;
    a line longer than :data:`MAX_JSONL_LINE_BYTES` is a located error (only the bytes around
    each chunk's first and last newline are looked at: lines inside a chunk are short enough)."""
    count, has_cr, last = 0, False, b""
    run = 0  # bytes of the line still open at the end of the previous chunk
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            first = chunk.find(b"\n")
            if first < 0:
                run += len(chunk)
            else:
                run += first
            if run > MAX_JSONL_LINE_BYTES:
                raise ContractError.single(
                    str(path),
                    f"line longer than {MAX_JSONL_LINE_BYTES} bytes (the limit of one record)",
                    line=count + 1,
                )
            if first >= 0:
                run = len(chunk) - chunk.rfind(b"\n") - 1
            count += chunk.count(b"\n")
            has_cr = has_cr or b"\r" in chunk
            last = chunk[-1:]
    return count, has_cr, last == b"\n"


def stage_jsonl(con: duckdb.DuckDBPyConnection, table: str, path: Path, extra: str = "") -> None:
    """Stage one JSONL file as (file, line, text), then the ``extra`` SQL columns (e.g.
    ``, NULL::VARCHAR AS stem``).

    The fast path is DuckDB's parallel line reader (blank lines come back as NULL rows,
    so row numbers are line numbers); it is trusted only when its row count equals the
    file's line count.
    """
    newlines, has_cr, trailing = _newline_count(path)
    lines = newlines + (0 if trailing or newlines == 0 and path.stat().st_size == 0 else 1)
    if not has_cr:
        try:
            con.execute(
                f"""CREATE OR REPLACE TEMP TABLE {table} AS
                    SELECT ?::VARCHAR AS file, line::INTEGER AS line, text{extra} FROM (
                        SELECT row_number() OVER () AS line, column0 AS text
                        FROM read_csv(?, columns = {{'column0': 'VARCHAR'}}, delim = chr(1), quote = '',
                                      escape = '', header = false, auto_detect = false, strict_mode = false,
                                      max_line_size = {MAX_JSONL_LINE_BYTES + 1}, new_line = '\\n')
                    ) WHERE text IS NOT NULL AND {_NOT_BLANK}""",
                [str(path), str(path)],
            )
            rows = con.execute(f"SELECT coalesce(max(line), 0) FROM {table}").fetchone()[0]
            if rows <= lines and (rows == lines or _trailing_blank_only(path, rows)):
                return
        except duckdb.Error:
            pass
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT *{extra} FROM ({_lines_sql('?')})", [str(path)])


# SQL: the staged ``text`` is not blank (only spaces: DuckDB's ``trim`` strips spaces). Its
# first character decides almost every line without the whole-string ``trim`` (~1 µs a line).
_NOT_BLANK = "text <> '' AND (NOT starts_with(text, ' ') OR trim(text) <> '')"


def _trailing_blank_only(path: Path, rows: int) -> bool:
    """True when every line after ``rows`` is blank (the fast reader drops trailing blanks)."""
    with open(path, "rb") as fh:
        for i, raw in enumerate(fh, start=1):
            if i > rows and raw.strip():
                return False
    return True


MAX_ARTIFACT_FILE_BYTES = 128 * 1024 * 1024  # one artifact file larger than this is refused, located
_READ_JSON_MIN = 16 * 1024 * 1024  # DuckDB's default object size limit: enough for almost every folder


def json_files(root: Path) -> list[str]:
    """Every ``*.json`` file under ``root`` (as ``Path.rglob`` finds them: symlinked folders are
    not entered, symlinked files count), as path strings in sorted order.

    A symlinked file must resolve inside ``root`` or a path the user allowed
    (:mod:`groundeval.contract.outside`): one that points elsewhere is a located error, never
    read (its content would be fetchable and searchable).

    ``os.scandir`` with the file types it already has: about twice as fast as ``rglob``
    with a ``stat`` per path, which matters at a million files."""
    out: list[str] = []
    links: list[str] = []
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except PermissionError:
            continue
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.name.endswith(".json") and e.is_file():
                    out.append(e.path)
                    if e.is_symlink():
                        links.append(e.path)
            except OSError:
                continue
    refused = [(name, real) for name in sorted(links) if (real := outside(name, root)) is not None]
    if refused:
        raise ContractError(
            [
                Problem(
                    file=name,
                    message=refusal("this artifact file (a symbolic link)", real, root, "the artifacts folder"),
                )
                for name, real in refused[:MAX_PROBLEMS]
            ]
        )
    out.sort()
    return out


def _read_file(name: str) -> tuple[bytes | None, os.stat_result]:
    """The whole file (to its end, as ``readall``), or ``None`` past :data:`MAX_ARTIFACT_FILE_BYTES`;
    and its ``fstat`` when opened.

    Four system calls for a small file (open, fstat, one read that returns short at the end,
    close): fewer than a Python file object's, which matters at 100K files."""
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if st.st_size > MAX_ARTIFACT_FILE_BYTES:
            return None, st
        data = os.read(fd, st.st_size + 1)
        if len(data) <= st.st_size:  # a short read of a regular file: its end
            return data, st
        parts = [data]  # it grew since the fstat: read on to its end
        while chunk := os.read(fd, 1 << 20):
            parts.append(chunk)
        return b"".join(parts), st
    finally:
        os.close(fd)


def _utf8(name: str) -> bool:
    """Whether a file name (decoded by the file system's surrogate escapes) is UTF-8."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def spool_json_files(
    files: list[str], seen: Callable[[str, os.stat_result], None] | None = None, stop: threading.Event | None = None
) -> tuple[str, int]:
    """The files as one temporary NDJSON file of ``{"f": path, "t": text}`` lines (one record per
    file; subsystem and id default to the parent folder and the stem): its path and an upper
    bound of its longest line's bytes, for :func:`stage_spool`. Python reads the files one at a
    time (a small read is a few microseconds; DuckDB's ``read_text`` over a list of paths costs
    ~0.2-0.4 ms per file and holds every path's state at once), and DuckDB's parallel JSON
    reader stages the spool in one pass. Python holds one file's text at a time: memory
    is bounded by the largest file. A file that is not UTF-8 or past
    :data:`MAX_ARTIFACT_FILE_BYTES` is a located error (all such files are reported together, up
    to ``MAX_PROBLEMS``). ``stop``, once set, ends the reading early (the caller failed)."""
    problems: list[Problem] = []
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    longest = 0  # bytes of the longest staged line (an upper bound): DuckDB's reader allocates twice its size limit
    fd, tmp = tempfile.mkstemp(prefix="groundeval-artifacts-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            write = out.write
            for name in files:
                if stop is not None and stop.is_set():
                    break
                if not _utf8(name):  # its id would come from the name; no store or trace can hold it
                    shown = os.fsencode(name).decode("utf-8", "backslashreplace")
                    problems.append(Problem(file=shown, message="file name is not valid UTF-8: rename the file"))
                    continue
                data, st = _read_file(name)
                if seen is not None:
                    seen(name, st)
                if data is None:
                    problems.append(Problem(file=name, message=f"file larger than {MAX_ARTIFACT_FILE_BYTES} bytes"))
                    continue
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    problems.append(
                        Problem(
                            file=name, message=f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
                        )
                    )
                    continue
                if problems:
                    continue  # keep looking for bad files, write nothing more
                line = '{"f":' + dumps(name) + ',"t":' + dumps(text) + "}\n"
                size = 4 * len(line)  # UTF-8 takes at most 4 bytes a character: exact only when it matters
                longest = max(longest, size if size <= _READ_JSON_MIN else len(line.encode("utf-8")))
                write(line)
        if problems:
            raise ContractError(problems[:MAX_PROBLEMS])
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp, longest


def stage_spool(con: duckdb.DuckDBPyConnection, table: str, spool: tuple[str, int], root: Path) -> None:
    """Stage a :func:`spool_json_files` file (deleted after, staged or not)."""
    tmp, longest = spool
    try:
        con.execute(
            f"""CREATE OR REPLACE TEMP TABLE {table} AS
                SELECT file, NULL::INTEGER AS line, text,
                       parse_filename(file, true) AS stem,
                       CASE WHEN parse_dirpath(file) <> ? THEN parse_filename(parse_dirpath(file)) END AS folder
                FROM read_json(?, format = 'newline_delimited', columns = {{'f': 'VARCHAR', 't': 'VARCHAR'}},
                               maximum_object_size = ?) AS r(file, text)""",
            [str(root), tmp, max(_READ_JSON_MIN, longest + 1)],
        )
    finally:
        os.unlink(tmp)


def stage_parquet(con: duckdb.DuckDBPyConnection, table: str, path: Path) -> None:
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE {table} AS
            SELECT ? AS file, row_number() OVER () AS line, to_json(t)::VARCHAR AS text
            FROM read_parquet(?) t""",
        [str(path), str(path)],
    )


def stage_csv(con: duckdb.DuckDBPyConnection, table: str, path: Path) -> None:
    """CSV columns become JSON fields; actors, artifact_ids and facts hold JSON text.

    ``actors`` may also be a ``;``-separated list. Other columns are kept as strings.
    """
    cols = [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM (DESCRIBE SELECT * FROM read_csv(?, all_varchar=true, header=true))", [str(path)]
        ).fetchall()
    ]
    parts = []
    for col in cols:
        ident = '"' + col.replace('"', '""') + '"'
        key = "'" + col.replace("'", "''") + "'"
        if col == "actors":
            expr = (
                f"CASE WHEN {ident} IS NULL OR trim({ident}) = '' THEN '[]'::JSON "
                f"WHEN json_valid({ident}) THEN {ident}::JSON "
                f"ELSE to_json(list_transform(string_split({ident}, ';'), x -> trim(x))) END"
            )
        elif col in ("artifact_ids", "facts"):
            expr = (
                f"CASE WHEN {ident} IS NULL OR trim({ident}) = '' THEN '{{}}'::JSON "
                f"WHEN json_valid({ident}) THEN {ident}::JSON ELSE to_json({ident}) END"
            )
        else:
            expr = ident
        parts.append(f"{key}, {expr}")
    obj = f"json_object({', '.join(parts)})" if parts else "'{}'"
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE {table} AS
            SELECT ? AS file, (row_number() OVER () + 1)::INTEGER AS line, {obj}::VARCHAR AS text
            FROM read_csv(?, all_varchar=true, header=true)""",
        [str(path), str(path)],
    )


def stage_events(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    suffix = path.suffix.lower()
    try:
        if path.is_dir():
            raise ContractError.single(str(path), "events source must be a file (.jsonl, .parquet or .csv)")
        if suffix == ".parquet":
            stage_parquet(con, "ev_stage", path)
        elif suffix == ".csv":
            stage_csv(con, "ev_stage", path)
        else:
            stage_jsonl(con, "ev_stage", path)
    except duckdb.Error as exc:
        raise ContractError.single(str(path), f"cannot read events: {str(exc).splitlines()[0]}") from None


class FolderReadAhead:
    """An artifact folder's files read into their spool (:func:`spool_json_files`) on a thread,
    started before the events are staged: the reading is Python and system calls, the events'
    staging and building DuckDB work that releases the GIL, so on two cores they overlap
    (0.2 s of reading at 19K files). Its errors are raised where :func:`stage_artifacts` would
    have raised them, by :meth:`take`; :meth:`close` stops it and deletes an unclaimed spool."""

    def __init__(self, path: Path, seen: Callable[[str, os.stat_result], None] | None = None) -> None:
        self.path = path
        self._stop = threading.Event()
        self._out: tuple[str, int] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._read, args=(seen,), name="groundeval-artifacts", daemon=True)
        self._thread.start()

    def _read(self, seen: Callable[[str, os.stat_result], None] | None) -> None:
        try:
            self._out = spool_folder(self.path, seen, self._stop)
        except BaseException as exc:  # noqa: BLE001 - raised again by take(), in the caller's thread
            self._error = exc

    def take(self) -> tuple[str, int] | None:
        """The folder's spool (``None`` when it has no file), once; or the reading's error."""
        self._thread.join()
        out, self._out = self._out, None
        if self._error is not None:
            raise self._error
        return out

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        if self._out is not None:
            os.unlink(self._out[0])
        self._out = None


def spool_folder(
    path: Path, seen: Callable[[str, os.stat_result], None] | None = None, stop: threading.Event | None = None
) -> tuple[str, int] | None:
    """The spool of every ``*.json`` file under ``path`` (:func:`json_files`), ``None`` when it has none."""
    files = json_files(path)
    return spool_json_files(files, seen, stop) if files else None


def stage_artifacts(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    seen: Callable[[str, os.stat_result], None] | None = None,
    ahead: FolderReadAhead | None = None,
) -> None:
    """Stage the artifacts (a JSONL file or a folder of JSON files). ``seen``, when given, is
    called with each folder file's path and ``fstat`` as it is read (for the store's fingerprint);
    ``ahead``: the folder's files already being read (``seen`` was given to it)."""
    try:
        if path.is_dir():
            spool = ahead.take() if ahead is not None else spool_folder(path, seen)
            if spool is None:
                con.execute(
                    "CREATE OR REPLACE TEMP TABLE art_stage (file VARCHAR, line INTEGER, text VARCHAR,"
                    " stem VARCHAR, folder VARCHAR)"
                )
                return
            stage_spool(con, "art_stage", spool, path)
        else:
            stage_jsonl(con, "art_stage", path, ", NULL::VARCHAR AS stem, NULL::VARCHAR AS folder")
    except duckdb.Error as exc:
        raise ContractError.single(str(path), f"cannot read artifacts: {str(exc).splitlines()[0]}") from None


def _collect(con, sql: str, params=None) -> list[Problem]:
    rows = con.execute(sql + f" ORDER BY file, line NULLS LAST LIMIT {MAX_PROBLEMS}", params or []).fetchall()
    return [Problem(file=r[0], line=r[1], field=r[2], message=r[3]) for r in rows]


def _is_string_list(j: str, types: str = "('VARCHAR')") -> str:
    """SQL: the JSON fragment ``j`` is an array of strings (of values of the JSON ``types``)."""
    return (
        f"(json_type({j}) = 'ARRAY' AND coalesce(list_bool_and(list_transform(json_extract({j}, '$[*]'),"
        f" x -> json_type(x) IN {types})), true))"
    )


# An id (of an event, an artifact, or in ``artifact_ids``) is a JSON string or integer, as the
# original format accepts: an integer is read as its decimal text (``1000`` -> ``"1000"``, what
# ``->>`` gives), so ``1000`` and ``"1000"`` name one record (two events or artifacts doing so
# are a duplicate id, reported as such). Floats, booleans and integers past 64 bits are refused.
ID_TYPES = "('VARCHAR', 'UBIGINT', 'BIGINT')"


# Regular expressions over a fragment as json_extract writes it (compact): each match is a
# sufficient condition for its shape check, ~4x cheaper than walking the fragment's values;
# a fragment that does not match is checked exactly (so spacing or escapes cannot matter).
_RX_STRING = r'"(?:[^"\\]|\\.)*"'
_RX_STRING_LIST = rf"\[(?:{_RX_STRING}(?:,{_RX_STRING})*)?\]"
_RX_ID_VALUE = rf"(?:{_RX_STRING}|null|{_RX_STRING_LIST})"
_RX_ID_MAP = rf"\{{(?:{_RX_STRING}:{_RX_ID_VALUE}(?:,{_RX_STRING}:{_RX_ID_VALUE})*)?\}}"


def _blank_string(j: str) -> str:
    """SQL: the JSON string fragment ``j`` trims to nothing. Only ``""`` and a string whose
    first character is not a printable ASCII one (a space, an escape, any non-ASCII character:
    DuckDB's ``trim`` also strips Unicode spaces such as U+00A0) can: only those are unquoted
    and trimmed."""
    first = f"substr({j}, 2, 1)"
    return f"""({j} = '""' OR NOT ({first} BETWEEN '!' AND '~' AND {first} NOT IN ('"', '\\')))
               AND trim({j}->>'$') = ''"""


def _matches(j: str, rx: str) -> str:
    """SQL: the fragment ``j`` fully matches ``rx``."""
    return f"regexp_full_match({j}, '{rx}')"


def _problems(con, table: str, checks: list[tuple[str | None, str, str]]) -> list[Problem]:
    """Run (field, message SQL, condition SQL) checks over ``table`` in one scan."""
    parts = [
        f"SELECT file, line, {('NULL' if f is None else repr(f))} AS field, {msg} AS message FROM {table} WHERE {cond}"
        for f, msg, cond in checks
    ]
    problems = _collect(con, "SELECT * FROM (" + " UNION ALL ".join(parts) + ")")
    return [_lone_surrogate(con, table, p) if p.message.startswith("malformed JSON") else p for p in problems]


def _surrogate_field(value: Any, path: str = "") -> str | None:
    """Dotted path of the first key or string holding a lone UTF-16 surrogate (``""`` for the record).

    Keys are rendered with backslash escapes so the path itself prints."""
    if isinstance(value, str):
        return path if any("\ud800" <= c <= "\udfff" for c in value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        name = k if isinstance(k, int) else k.encode("utf-8", "backslashreplace").decode("utf-8")
        sub = f"{path}[{name}]" if isinstance(k, int) else f"{path}.{name}" if path else name
        if isinstance(k, str) and _surrogate_field(k) is not None:
            return sub
        found = _surrogate_field(v, sub)
        if found is not None:
            return found
    return None


def _lone_surrogate(con, table: str, problem: Problem) -> Problem:
    """Name the field when DuckDB refused a record only for a lone surrogate escape (e.g. ``"\\ud800"``).

    Such text is JSON by grammar but not Unicode, so the store cannot hold it; Python's
    parser accepts it, which locates the field. Runs for the few refused records only."""
    row = con.execute(
        f"SELECT text FROM {table} WHERE file = ? AND line IS NOT DISTINCT FROM ? LIMIT 1", [problem.file, problem.line]
    ).fetchone()
    try:
        field = _surrogate_field(json.loads(row[0])) if row else None
    except (ValueError, RecursionError):
        field = None
    if not field:
        return problem
    return Problem(
        file=problem.file,
        line=problem.line,
        field=field,
        message="not valid Unicode: a lone surrogate escape (\\uD800-\\uDFFF without its pair)",
    )


def _parse(con, stage: str, out: str, paths: list[str], derived: str = "") -> None:
    """Parse each staged record once, extracting ``paths`` as JSON fragments ``j1..jn``
    (then the ``derived`` SQL columns, computed from them, e.g. ``, j1 || j2 AS k``).

    ``valid`` is whether the extraction could parse the text: ``try`` gives ``NULL`` exactly
    where ``json_valid`` is false (a property test holds them equal), without a second
    parse of every record (≈ 0.25 s CPU a million records)."""
    cols = ", ".join(f"j[{i + 1}] AS j{i + 1}" for i in range(len(paths)))
    plist = "[" + ", ".join(f"'{p}'" for p in paths) + "]"
    con.execute(f"""CREATE OR REPLACE TEMP TABLE {out} AS
                    SELECT *{derived} FROM (SELECT * EXCLUDE (parsed, j), {cols} FROM (
                        SELECT *, CASE WHEN ok THEN parsed END AS j FROM (
                            SELECT *, valid AND left(ltrim(text), 1) = '{{' AS ok FROM (
                                SELECT *, parsed IS NOT NULL AS valid FROM (
                                    SELECT *, try(json_extract(text, {plist})) AS parsed FROM {stage})))))""")
    con.execute(f"DROP TABLE {stage}")  # keep peak memory to one copy of the text


EVENT_PATHS = ["$.id", "$.type", "$.timestamp", "$.actors", "$.artifact_ids", "$.facts"]


def validate_events(con) -> list[Problem]:
    # eid: the id's text, extracted once (the checks and three tables use it)
    _parse(
        con, "ev_stage", "ev_x", EVENT_PATHS, ", j1->>'$' AS eid"
    )  # j1 id, j2 type, j3 timestamp, j4 actors, j5 artifact_ids, j6 facts
    checks: list[tuple[str | None, str, str]] = [
        (None, "'malformed JSON line'", "NOT valid"),
        (None, "'expected a JSON object'", "valid AND NOT ok"),
    ]
    for f, j, types, what in (
        ("id", "j1", ID_TYPES, "a string or an integer"),
        ("type", "j2", "('VARCHAR')", "a string"),
        ("timestamp", "j3", "('VARCHAR')", "a string"),
    ):
        checks.append(
            (
                f,
                f"CASE WHEN {j} IS NULL THEN 'missing required field' "
                f"ELSE 'expected {what}, got ' || lower(json_type({j})) END",
                f"ok AND json_type({j}) NOT IN {types} OR ok AND {j} IS NULL",
            )
        )
    checks += [
        (
            "id",
            "'empty id'",
            f"ok AND json_type(j1) = 'VARCHAR' AND {_blank_string('j1')}",
        ),
        (
            "timestamp",
            "'unparseable timestamp ' || j3",
            # 'infinity' and '-infinity' are timestamps to DuckDB, not moments: refused as unparseable
            "ok AND json_type(j3) = 'VARCHAR' AND NOT coalesce(isfinite(try_cast(j3->>'$' AS TIMESTAMPTZ)), false)",
        ),
        (
            "actors",
            "'expected a list of strings'",
            f"ok AND j4 IS NOT NULL AND NOT {_matches('j4', _RX_STRING_LIST)} AND NOT {_is_string_list('j4')}",
        ),
        (
            "artifact_ids",
            "'expected a mapping of key -> id or list of ids'",
            f"ok AND j5 IS NOT NULL AND NOT {_matches('j5', _RX_ID_MAP)} AND (json_type(j5) <> 'OBJECT'"
            " OR NOT coalesce(list_bool_and(list_transform(json_extract(j5, '$.*'), v -> json_type(v) IN"
            f" ('VARCHAR', 'NULL', 'UBIGINT', 'BIGINT') OR {_is_string_list('v', ID_TYPES)})), true))",
        ),
        ("facts", "'expected a mapping'", "ok AND j6 IS NOT NULL AND json_type(j6) <> 'OBJECT'"),
    ]
    problems = _problems(con, "ev_x", checks)
    has_duplicates = con.execute(
        f"SELECT count(eid) <> count(DISTINCT eid) FROM (SELECT eid FROM ev_x WHERE ok AND json_type(j1) IN {ID_TYPES})"
    ).fetchone()[0]
    if not has_duplicates:
        return problems
    return problems + _collect(
        con,
        """
        SELECT file, line, 'id', 'duplicate event id ' || to_json(eid) || ' (first at line ' || first_line || ')'
               || CASE WHEN mixed THEN '; an integer id and a string id of the same digits name one event' ELSE '' END
        FROM (SELECT file, line, eid,
                     first_value(line) OVER (PARTITION BY eid ORDER BY file, line) AS first_line,
                     row_number() OVER (PARTITION BY eid ORDER BY file, line) AS n,
                     count(DISTINCT json_type(j1) = 'VARCHAR') OVER (PARTITION BY eid) > 1 AS mixed
              FROM ev_x WHERE ok AND json_type(j1) IN {ID_TYPES}) WHERE n > 1""".format(ID_TYPES=ID_TYPES),
    )


ARTIFACT_PATHS = ["$.id", "$.subsystem", "$.timestamp", "$.created_at", "$.date", "$.title", "$.actors", "$.visibility"]


def validate_artifacts(con) -> list[Problem]:
    _parse(
        con,
        "art_stage",
        "art_x",
        ARTIFACT_PATHS,
        f""", CASE WHEN json_type(j1) IN {ID_TYPES} THEN j1->>'$' ELSE stem END AS aid,
             CASE WHEN json_type(j2) = 'VARCHAR' THEN j2->>'$' ELSE folder END AS subsystem,
             coalesce(j3, j4, j5) AS created_j""",
    )
    vis_list = "coalesce(" + _is_string_list("json_extract(j8, '$.{k}')") + ", true)"
    checks: list[tuple[str | None, str, str]] = [
        (None, "'malformed JSON'", "NOT valid"),
        (None, "'expected a JSON object'", "valid AND NOT ok"),
        ("id", "'missing id (give an id field or name the file <id>.json)'", "ok AND (aid IS NULL OR trim(aid) = '')"),
        (
            "subsystem",
            "'missing subsystem (give a subsystem field or put the file in artifacts/<subsystem>/)'",
            "ok AND (subsystem IS NULL OR trim(subsystem) = '')",
        ),
        (
            "timestamp",
            "'unparseable timestamp ' || created_j",
            "ok AND created_j IS NOT NULL AND (json_type(created_j) <> 'VARCHAR'"
            " OR NOT coalesce(isfinite(try_cast(created_j->>'$' AS TIMESTAMPTZ)), false))",
        ),
        (
            "actors",
            "'expected a list of strings'",
            f"ok AND j7 IS NOT NULL AND NOT {_matches('j7', _RX_STRING_LIST)} AND NOT {_is_string_list('j7')}",
        ),
        (
            "visibility",
            "'expected {actors: [...], roles: [...]}'",
            "ok AND j8 IS NOT NULL AND (json_type(j8) <> 'OBJECT'"
            " OR NOT coalesce(list_bool_and(list_transform(json_keys(j8), k -> k IN ('actors', 'roles'))), true)"
            " OR (json_extract(j8, '$.actors') IS NOT NULL AND NOT " + vis_list.format(k="actors") + ")"
            " OR (json_extract(j8, '$.roles') IS NOT NULL AND NOT " + vis_list.format(k="roles") + "))",
        ),
    ]
    problems = _problems(con, "art_x", checks)
    has_duplicates = con.execute(
        "SELECT count(aid) <> count(DISTINCT aid) FROM art_x WHERE ok AND aid IS NOT NULL"
    ).fetchone()[0]
    if not has_duplicates:
        return problems
    return problems + _collect(
        con,
        """
        SELECT file, line, 'id', 'duplicate artifact id ' || to_json(aid) || ' (also in ' || first_file || ')'
               || CASE WHEN mixed THEN '; an integer id and a string id of the same digits name one artifact' ELSE '' END
        FROM (SELECT file, line, aid,
                     count(DISTINCT coalesce(json_type(j1) = 'VARCHAR', true)) OVER (PARTITION BY aid) > 1 AS mixed,
                     first_value(file || coalesce(':' || line, '')) OVER (PARTITION BY aid ORDER BY file, line)
                         AS first_file,
                     row_number() OVER (PARTITION BY aid ORDER BY file, line) AS n
              FROM art_x WHERE ok AND aid IS NOT NULL) WHERE n > 1""",
    )


def build_tables(con) -> None:
    """Type the validated staging rows into the final tables."""
    build_events(con)
    build_event_links(con)
    build_artifacts(con)
    build_artifact_text(con)


def build_events(con) -> None:
    """``events`` from the validated ``ev_x``."""
    con.execute(
        """CREATE OR REPLACE TABLE events AS
           SELECT eid AS id, j2->>'$' AS type, CAST(j3->>'$' AS TIMESTAMPTZ) AS ts,
                  json(text) AS raw, file AS src_file, line AS src_line
           FROM ev_x ORDER BY id"""
    )


def build_event_links(con) -> None:
    """``event_actors`` and ``event_artifacts`` from the validated ``ev_x``.

    A key repeated in one ``artifact_ids`` (JSON with duplicate keys) keeps every pair, as
    DuckDB's MAP reading gives them (``artifact_text`` reads a record's keys the same way);
    the id ends the sort key, so such rows too have one order."""
    con.execute(
        """CREATE OR REPLACE TABLE event_actors AS
           SELECT event_id, unnest(range(len(a))) AS pos, unnest(a) AS actor
           FROM (SELECT eid AS event_id, json_extract_string(j4, '$[*]') AS a FROM ev_x WHERE j4 IS NOT NULL)
           ORDER BY event_id, pos"""
    )
    con.execute(
        """CREATE OR REPLACE TABLE event_artifacts AS
           WITH kv AS (
               SELECT event_id, unnest(map_entries(m)) AS e
               FROM (SELECT eid AS event_id, json_transform(j5, '"MAP(VARCHAR, JSON)"') AS m
                     FROM ev_x WHERE json_type(j5) = 'OBJECT')
           )
           SELECT event_id, e.key AS key, 0 AS pos, e.value->>'$' AS artifact_id FROM kv
             WHERE json_type(e.value) IN ('VARCHAR', 'UBIGINT', 'BIGINT')
           UNION ALL
           SELECT event_id, key, unnest(range(len(l))) AS pos, unnest(l) AS artifact_id FROM
             (SELECT event_id, e.key AS key, json_extract_string(e.value, '$[*]') AS l FROM kv
              WHERE json_type(e.value) = 'ARRAY')
           ORDER BY event_id, key, pos, artifact_id"""
    )


def build_artifacts(con) -> None:
    """``artifacts`` from the validated ``art_x``."""
    con.execute(
        """CREATE OR REPLACE TABLE artifacts AS
           SELECT aid AS id, subsystem, CAST(created_j->>'$' AS TIMESTAMPTZ) AS created,
                  j6->>'$' AS title,
                  coalesce(json_extract_string(j7, '$[*]'), []) AS actors,
                  coalesce(json_type(j8) = 'OBJECT', false) AS restricted_inline,
                  json(text) AS raw, file AS src_file, line AS src_line
           FROM art_x ORDER BY id"""
    )


def build_artifact_text(con) -> None:
    """``artifact_text`` from ``artifacts``."""
    reserved = ", ".join(f"'{k}'" for k in RESERVED_ARTIFACT_KEYS)
    con.execute(
        f"""CREATE OR REPLACE TABLE artifact_text AS
            SELECT id, coalesce(title, '') AS title,
                   coalesce(array_to_string(list_filter(list_transform(
                       list_sort(list_filter(map_entries(m), e -> e.key NOT IN ({reserved}))), e ->
                       CASE WHEN json_type(e.value) = 'VARCHAR' THEN e.value->>'$'
                            WHEN json_type(e.value) = 'ARRAY'
                                THEN array_to_string(json_extract_string(e.value, '$[*]'), ' ')
                       END), x -> x IS NOT NULL AND x <> ''), chr(10)), '') AS body
            FROM (SELECT id, title, json_transform(raw, '"MAP(VARCHAR, JSON)"') AS m FROM artifacts)
            ORDER BY id"""
    )


KEPT_EVENTS, KEPT_ARTIFACTS = "_kept_ev_rows", "_kept_art_rows"


def ingest(
    con,
    events_path: Path,
    artifacts_path: Path,
    *,
    keep_rows: bool = False,
    artifact_seen: Callable[[str, os.stat_result], None] | None = None,
    built: Callable[[str], None] | None = None,
) -> None:
    """Stage, validate (all problems at once) and build the record tables.

    ``artifact_seen`` is called with each artifact file of a folder as it is read (see
    :func:`stage_artifacts`). ``built`` is called with ``"events"`` as soon as the
    ``events`` table exists and with ``"artifacts"`` once ``artifacts`` does (the caller
    may read them on another cursor while the other tables are built).

    ``events`` is built before the artifacts are read (when the events have no problems)
    and the tables of the records' fields (actors, links, text) after ``artifacts``, so both
    digests run beside DuckDB work; a problem in either source still raises every problem
    of both, the events' first, once both are validated.

    ``keep_rows`` keeps the staged rows (file, line, text; stem and folder of artifact
    files) in the temporary tables :data:`KEPT_EVENTS` and :data:`KEPT_ARTIFACTS`, as the
    verifier's lenient reader would stage them, so a verifier run on this store checks
    these very records instead of reading every source file a second time."""
    ahead = FolderReadAhead(artifacts_path, artifact_seen) if artifacts_path.is_dir() else None
    try:
        _ingest(con, events_path, artifacts_path, keep_rows, built, ahead)
    finally:
        if ahead is not None:
            ahead.close()


def _ingest(
    con,
    events_path: Path,
    artifacts_path: Path,
    keep_rows: bool,
    built: Callable[[str], None] | None,
    ahead: FolderReadAhead | None,
) -> None:
    stage_events(con, events_path)
    problems = validate_events(con)
    if not problems:
        build_events(con)
        if built is not None:
            built("events")
        if keep_rows:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {KEPT_EVENTS} AS SELECT file, line, text FROM ev_x")
        # only what the links need stays while the artifacts are read (the text's memory is released)
        con.execute("CREATE OR REPLACE TEMP TABLE ev_x AS SELECT eid, j4, j5 FROM ev_x")
    release_freed_memory(con)  # the events' staging (~15 MB at 22.5K events), before the artifacts'
    stage_artifacts(con, artifacts_path, None, ahead)
    problems += validate_artifacts(con)
    if problems:
        raise ContractError(problems)
    build_artifacts(con)
    if built is not None:
        built("artifacts")
    # The tables built from the records' fields, while their digests are computed; each
    # staging table is dropped as soon as it has served (a lower peak at 1M).
    release_freed_memory(con)  # the artifacts' validation (~30 MB at 19K files), before the links
    build_event_links(con)
    con.execute("DROP TABLE IF EXISTS ev_x")
    build_artifact_text(con)
    if keep_rows:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {KEPT_ARTIFACTS} AS SELECT file, line, text, stem, folder FROM art_x"
        )
    con.execute("DROP TABLE IF EXISTS art_x")
