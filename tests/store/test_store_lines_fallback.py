"""The exact line reader (used for a JSONL file holding carriage returns) gives the rows
the original formulation gave — same files, line numbers, texts and blank-line rule — on
arbitrary mixes of CR, LF, spaces and text, through the staging it serves."""

from __future__ import annotations

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.store import ingest as I

ORIGINAL = """
    SELECT filename AS file, line, rtrim(text, chr(13)) AS text FROM (
        SELECT filename, unnest(range(1, len(arr) + 1)) AS line, unnest(arr) AS text
        FROM (SELECT filename, string_split(content, chr(10)) AS arr FROM read_text(?))
    ) WHERE trim(text) <> ''
"""

PIECES = st.sampled_from(["\n", "\r", "\r\n", " ", "  ", "\t", '{"a": 1}', "x", "é", "[]", "\r\r\n", "\n\n"])


@settings(max_examples=150, deadline=None)
@given(st.lists(PIECES, max_size=25))
def test_the_line_reader_equals_the_original(tmp_path_factory, pieces):
    path = tmp_path_factory.mktemp("lines") / "events.jsonl"
    path.write_bytes("".join(pieces).encode("utf-8"))
    con = duckdb.connect()
    expected = con.execute(ORIGINAL + " ORDER BY file, line", [str(path)]).fetchall()
    assert con.execute(I._lines_sql("?"), [str(path)]).fetchall() == expected


def test_a_file_with_carriage_returns_stages_by_the_line_reader(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"a": 1}\r\n\r\n  \r\n{"b": 2}\r\n')
    con = duckdb.connect()
    I.stage_jsonl(con, "s", path, ", NULL::VARCHAR AS stem")
    assert con.execute("SELECT line, text, stem FROM s ORDER BY line").fetchall() == [
        (1, '{"a": 1}', None),
        (2, "", None),  # as before: a line holding only a carriage return is not blank to trim()
        (3, "  ", None),
        (4, '{"b": 2}', None),
    ]
