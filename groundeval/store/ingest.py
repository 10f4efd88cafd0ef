"""Bulk ingestion of events and artifacts into DuckDB, validated set-wise in SQL.

Records are read as raw JSON text with their source file and line, checked with
set-based queries (one pass per rule, not one Python call per record), and only
then typed into the final tables. Every problem carries file, line and field.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..errors import ContractError, Problem

MAX_PROBLEMS = 50

# Artifact keys that are not text to search.
RESERVED_ARTIFACT_KEYS = ("id", "subsystem", "timestamp", "created_at", "date", "visibility", "title", "actors")


def _lines_sql(source: str) -> str:
    """Rows (file, line, text) for every non-blank line of the JSONL files in ``source``."""
    return f"""
        SELECT filename AS file, line, rtrim(text, chr(13)) AS text FROM (
            SELECT filename, unnest(range(1, len(arr) + 1)) AS line, unnest(arr) AS text
            FROM (SELECT filename, string_split(content, chr(10)) AS arr FROM read_text({source}))
        ) WHERE trim(text) <> ''
    """


def stage_jsonl(con: duckdb.DuckDBPyConnection, table: str, path: Path) -> None:
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {_lines_sql('?')}", [str(path)])


def stage_json_files(con: duckdb.DuckDBPyConnection, table: str, files: list[Path], root: Path) -> None:
    """One record per file; subsystem and id default to the parent folder and the stem."""
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE {table} AS
            SELECT filename AS file, NULL::INTEGER AS line, content AS text,
                   parse_filename(filename, true) AS stem,
                   CASE WHEN parent <> ? THEN parse_filename(parent) END AS folder
            FROM (SELECT filename, content, parse_dirpath(filename) AS parent FROM read_text(?))""",
        [str(root), [str(f) for f in files]],
    )


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
    cols = [r[0] for r in con.execute(
        "SELECT column_name FROM (DESCRIBE SELECT * FROM read_csv(?, all_varchar=true, header=true))",
        [str(path)]).fetchall()]
    parts = []
    for col in cols:
        ident = '"' + col.replace('"', '""') + '"'
        key = "'" + col.replace("'", "''") + "'"
        if col == "actors":
            expr = (f"CASE WHEN {ident} IS NULL OR trim({ident}) = '' THEN '[]'::JSON "
                    f"WHEN json_valid({ident}) THEN {ident}::JSON "
                    f"ELSE to_json(list_transform(string_split({ident}, ';'), x -> trim(x))) END")
        elif col in ("artifact_ids", "facts"):
            expr = (f"CASE WHEN {ident} IS NULL OR trim({ident}) = '' THEN '{{}}'::JSON "
                    f"WHEN json_valid({ident}) THEN {ident}::JSON ELSE to_json({ident}) END")
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


def stage_artifacts(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    try:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*.json") if p.is_file())
            if not files:
                con.execute("CREATE OR REPLACE TEMP TABLE art_stage (file VARCHAR, line INTEGER, text VARCHAR,"
                            " stem VARCHAR, folder VARCHAR)")
                return
            stage_json_files(con, "art_stage", files, path)
        else:
            stage_jsonl(con, "art_stage_l", path)
            con.execute("CREATE OR REPLACE TEMP TABLE art_stage AS SELECT file, line, text,"
                        " NULL::VARCHAR AS stem, NULL::VARCHAR AS folder FROM art_stage_l")
    except duckdb.Error as exc:
        raise ContractError.single(str(path), f"cannot read artifacts: {str(exc).splitlines()[0]}") from None


def _collect(con, sql: str, params=None) -> list[Problem]:
    rows = con.execute(sql + f" ORDER BY file, line NULLS LAST LIMIT {MAX_PROBLEMS}", params or []).fetchall()
    return [Problem(file=r[0], line=r[1], field=r[2], message=r[3]) for r in rows]


_STRING_LIST = "list_bool_and(list_transform(json_extract(text, '$.{f}[*]'), x -> json_type(x) = 'VARCHAR'))"


def validate_events(con) -> list[Problem]:
    con.execute("CREATE OR REPLACE TEMP TABLE ev_json AS SELECT file, line, text FROM ev_stage WHERE json_valid(text)"
                " AND json_type(text) = 'OBJECT'")
    checks = [
        "SELECT file, line, NULL, 'malformed JSON line' FROM ev_stage WHERE NOT json_valid(text)",
        "SELECT file, line, NULL, 'expected a JSON object' FROM ev_stage WHERE json_valid(text)"
        " AND json_type(text) <> 'OBJECT'",
    ]
    for f in ("id", "type", "timestamp"):
        checks.append(f"SELECT file, line, '{f}', CASE WHEN json_type(text, '$.{f}') IS NULL "
                      f"THEN 'missing required field' ELSE 'expected a string, got ' || lower(json_type(text, '$.{f}')) END "
                      f"FROM ev_json WHERE json_type(text, '$.{f}') IS DISTINCT FROM 'VARCHAR'")
    checks += [
        "SELECT file, line, 'id', 'empty id' FROM ev_json WHERE trim(json_extract_string(text, '$.id')) = ''",
        "SELECT file, line, 'timestamp', 'unparseable timestamp ' || to_json(json_extract_string(text, '$.timestamp'))"
        " FROM ev_json WHERE json_type(text, '$.timestamp') = 'VARCHAR'"
        " AND try_cast(json_extract_string(text, '$.timestamp') AS TIMESTAMPTZ) IS NULL",
        "SELECT file, line, 'actors', 'expected a list of strings' FROM ev_json"
        " WHERE json_type(text, '$.actors') IS NOT NULL AND (json_type(text, '$.actors') <> 'ARRAY' OR NOT "
        + _STRING_LIST.format(f="actors") + ")",
        "SELECT file, line, 'artifact_ids', 'expected a mapping of key -> id or list of ids' FROM ev_json"
        " WHERE json_type(text, '$.artifact_ids') IS NOT NULL AND (json_type(text, '$.artifact_ids') <> 'OBJECT'"
        " OR NOT list_bool_and(list_transform(json_extract(text, '$.artifact_ids.*'), v -> json_type(v) IN ('VARCHAR', 'NULL')"
        " OR (json_type(v) = 'ARRAY' AND list_bool_and(list_transform(json_extract(v, '$[*]'),"
        " x -> json_type(x) = 'VARCHAR'))))))",
        "SELECT file, line, 'facts', 'expected a mapping' FROM ev_json"
        " WHERE json_type(text, '$.facts') IS NOT NULL AND json_type(text, '$.facts') <> 'OBJECT'",
        """SELECT file, line, 'id', 'duplicate event id ' || to_json(eid) || ' (first at line ' || first_line || ')'
           FROM (SELECT file, line, json_extract_string(text, '$.id') AS eid,
                        first_value(line) OVER (PARTITION BY json_extract_string(text, '$.id') ORDER BY file, line) AS first_line,
                        row_number() OVER (PARTITION BY json_extract_string(text, '$.id') ORDER BY file, line) AS n
                 FROM ev_json WHERE json_type(text, '$.id') = 'VARCHAR') WHERE n > 1""",
    ]
    problems: list[Problem] = []
    for sql in checks:
        problems += _collect(con, f"SELECT * FROM ({sql}) AS p(file, line, field, message)")
    return problems


def validate_artifacts(con) -> list[Problem]:
    con.execute(
        """CREATE OR REPLACE TEMP TABLE art_json AS
           SELECT file, line, text,
                  CASE WHEN json_type(text, '$.id') = 'VARCHAR' THEN json_extract_string(text, '$.id') ELSE stem END AS aid,
                  CASE WHEN json_type(text, '$.subsystem') = 'VARCHAR' THEN json_extract_string(text, '$.subsystem')
                       ELSE folder END AS subsystem,
                  coalesce(json_extract_string(text, '$.timestamp'), json_extract_string(text, '$.created_at'),
                           json_extract_string(text, '$.date')) AS created_text
           FROM art_stage WHERE json_valid(text) AND json_type(text) = 'OBJECT'"""
    )
    checks = [
        "SELECT file, line, NULL, 'malformed JSON' FROM art_stage WHERE NOT json_valid(text)",
        "SELECT file, line, NULL, 'expected a JSON object' FROM art_stage WHERE json_valid(text)"
        " AND json_type(text) <> 'OBJECT'",
        "SELECT file, line, 'id', 'missing id (give an id field or name the file <id>.json)' FROM art_json"
        " WHERE aid IS NULL OR trim(aid) = ''",
        "SELECT file, line, 'subsystem', 'missing subsystem (give a subsystem field or put the file in"
        " artifacts/<subsystem>/)' FROM art_json WHERE subsystem IS NULL OR trim(subsystem) = ''",
        "SELECT file, line, 'timestamp', 'unparseable timestamp ' || to_json(created_text) FROM art_json"
        " WHERE created_text IS NOT NULL AND try_cast(created_text AS TIMESTAMPTZ) IS NULL",
        "SELECT file, line, 'actors', 'expected a list of strings' FROM art_json"
        " WHERE json_type(text, '$.actors') IS NOT NULL AND (json_type(text, '$.actors') <> 'ARRAY' OR NOT "
        + _STRING_LIST.format(f="actors") + ")",
        "SELECT file, line, 'visibility', 'expected {actors: [...], roles: [...]}' FROM art_json"
        " WHERE json_type(text, '$.visibility') IS NOT NULL AND (json_type(text, '$.visibility') <> 'OBJECT'"
        " OR list_has_any(json_keys(text, '$.visibility'), NULL) "
        " OR NOT list_bool_and(list_transform(json_keys(text, '$.visibility'), k -> k IN ('actors', 'roles')))"
        " OR coalesce(NOT " + _STRING_LIST.format(f="visibility.actors") + ", false)"
        " OR coalesce(NOT " + _STRING_LIST.format(f="visibility.roles") + ", false))",
        """SELECT file, line, 'id', 'duplicate artifact id ' || to_json(aid) || ' (also in ' || first_file || ')'
           FROM (SELECT file, line, aid,
                        first_value(file || coalesce(':' || line, '')) OVER (PARTITION BY aid ORDER BY file, line) AS first_file,
                        row_number() OVER (PARTITION BY aid ORDER BY file, line) AS n
                 FROM art_json WHERE aid IS NOT NULL) WHERE n > 1""",
    ]
    problems: list[Problem] = []
    for sql in checks:
        problems += _collect(con, f"SELECT * FROM ({sql}) AS p(file, line, field, message)")
    return problems


def build_tables(con) -> None:
    """Type the validated staging rows into the final tables."""
    con.execute(
        """CREATE OR REPLACE TABLE events AS
           SELECT json_extract_string(text, '$.id') AS id,
                  json_extract_string(text, '$.type') AS type,
                  CAST(json_extract_string(text, '$.timestamp') AS TIMESTAMPTZ) AS ts,
                  json(text) AS raw, file AS src_file, line AS src_line
           FROM ev_json ORDER BY id"""
    )
    con.execute(
        """CREATE OR REPLACE TABLE event_actors AS
           SELECT id AS event_id, unnest(range(len(a))) AS pos, unnest(a) AS actor
           FROM (SELECT id, coalesce(json_extract_string(raw, '$.actors[*]'), []) AS a FROM events)
           ORDER BY event_id, pos"""
    )
    con.execute(
        """CREATE OR REPLACE TABLE event_artifacts AS
           WITH kv AS (
               SELECT id AS event_id, unnest(keys) AS key FROM
                 (SELECT id, raw, json_keys(raw, '$.artifact_ids') AS keys FROM events
                  WHERE json_type(raw, '$.artifact_ids') = 'OBJECT')
           ), vals AS (
               SELECT k.event_id, k.key, json_extract(e.raw, '$.artifact_ids.' || to_json(k.key)) AS v
               FROM kv k JOIN events e ON e.id = k.event_id
           )
           SELECT event_id, key, 0 AS pos, json_extract_string(v, '$') AS artifact_id FROM vals
             WHERE json_type(v) = 'VARCHAR'
           UNION ALL
           SELECT event_id, key, unnest(range(len(l))) AS pos, unnest(l) AS artifact_id FROM
             (SELECT event_id, key, json_extract_string(v, '$[*]') AS l FROM vals WHERE json_type(v) = 'ARRAY')
           ORDER BY event_id, key, pos"""
    )
    con.execute(
        f"""CREATE OR REPLACE TABLE artifacts AS
            SELECT aid AS id, subsystem,
                   CAST(created_text AS TIMESTAMPTZ) AS created,
                   json_extract_string(text, '$.title') AS title,
                   coalesce(json_extract_string(text, '$.actors[*]'), []) AS actors,
                   coalesce(json_type(text, '$.visibility') = 'OBJECT', false) AS restricted_inline,
                   json(text) AS raw, file AS src_file, line AS src_line
            FROM art_json ORDER BY id"""
    )
    reserved = ", ".join(f"'{k}'" for k in RESERVED_ARTIFACT_KEYS)
    con.execute(
        f"""CREATE OR REPLACE TABLE artifact_text AS
            SELECT id, coalesce(title, '') AS title,
                   array_to_string(list_filter(list_transform(vals, v ->
                       CASE WHEN json_type(v) = 'VARCHAR' THEN json_extract_string(v, '$')
                            WHEN json_type(v) = 'ARRAY' THEN array_to_string(json_extract_string(v, '$[*]'), ' ')
                       END), x -> x IS NOT NULL AND x <> ''), chr(10)) AS body
            FROM (SELECT id, title, list_transform(keys, k -> json_extract(raw, '$.' || to_json(k))) AS vals
                  FROM (SELECT id, title, raw,
                               list_filter(list_sort(json_keys(raw)), k -> k NOT IN ({reserved})) AS keys
                        FROM artifacts))
            ORDER BY id"""
    )


def ingest(con, events_path: Path, artifacts_path: Path) -> None:
    """Stage, validate (all problems at once) and build the record tables."""
    stage_events(con, events_path)
    stage_artifacts(con, artifacts_path)
    problems = validate_events(con) + validate_artifacts(con)
    if problems:
        raise ContractError(problems)
    build_tables(con)
    for t in ("ev_stage", "ev_json", "art_stage", "art_stage_l", "art_json"):
        con.execute(f"DROP TABLE IF EXISTS {t}")
