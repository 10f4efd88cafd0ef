"""A pack reads only inside its own folder (issue 31, item 3): ``sources`` with ``..`` or an
absolute path, a source or an artifact file that is a symlink to a file elsewhere, are refused
with a located error saying how to allow it (``groundeval --allow-outside PATH``), and never
read; with the path allowed they load as before."""

from __future__ import annotations

import json
import os
import shutil
from contextlib import closing

import pytest
import yaml

from groundeval.cli.main import main
from groundeval.contract.outside import allow_outside, allowed_outside
from groundeval.errors import ContractError
from groundeval.store.store import Store
from groundeval.verifier import verify

SECRET = "the-secret-words-of-another-file"


@pytest.fixture(autouse=True)
def nothing_allowed():
    saved = allowed_outside()
    allow_outside([])
    yield
    allow_outside(saved)


@pytest.fixture()
def layout(tmp_path, tiny_pack):
    """``tmp/pack`` (a copy of tiny) beside ``tmp/elsewhere`` holding a secret artifact and events."""
    pack = tmp_path / "pack"
    shutil.copytree(tiny_pack, pack)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    record = {"title": "secret", "timestamp": "2026-03-01T08:00:00Z", "actors": ["alice"], "body": SECRET}
    (elsewhere / "SECRET-1.json").write_text(json.dumps(record) + "\n")
    shutil.copy(pack / "events.jsonl", elsewhere / "events.jsonl")
    return pack, elsewhere


def set_sources(pack, **sources):
    manifest = pack / "groundeval.yaml"
    data = yaml.safe_load(manifest.read_text())
    data["sources"].update(sources)
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))


def cli(capsys, *args):
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return (code, *capsys.readouterr())


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink"])
def test_an_events_source_outside_the_pack_is_refused_located(layout, how):
    pack, elsewhere = layout
    if how == "dotdot":
        set_sources(pack, events="../elsewhere/events.jsonl")
    elif how == "absolute":
        set_sources(pack, events=str(elsewhere / "events.jsonl"))
    else:
        (pack / "events.jsonl").unlink()
        os.symlink(elsewhere / "events.jsonl", pack / "events.jsonl")
    with pytest.raises(ContractError) as caught:
        Store.open(pack)
    (problem,) = caught.value.problems
    assert problem.file == str(pack / "groundeval.yaml") and problem.field == "sources.events" and problem.line
    assert str(elsewhere / "events.jsonl") in problem.message and "--allow-outside" in problem.message


def test_an_artifacts_folder_outside_the_pack_is_refused(layout):
    pack, elsewhere = layout
    set_sources(pack, artifacts="../elsewhere")
    with pytest.raises(ContractError) as caught:
        Store.open(pack)
    assert caught.value.problems[0].field == "sources.artifacts"


def test_a_symlinked_artifact_file_pointing_outside_is_refused_and_never_served(layout):
    pack, elsewhere = layout
    link = pack / "artifacts" / "jira" / "SECRET-1.json"
    os.symlink(elsewhere / "SECRET-1.json", link)
    with pytest.raises(ContractError) as caught:
        Store.open(pack)
    (problem,) = caught.value.problems
    assert problem.file == str(link) and "--allow-outside" in problem.message
    assert str(elsewhere / "SECRET-1.json") in problem.message
    result = verify(pack, level=1)
    assert result.failed() and any(str(link) == f.file for f in result.errors)
    assert SECRET not in json.dumps([str(f) for f in result.findings])


def test_a_symlink_inside_the_pack_is_read(layout):
    pack, _ = layout
    os.symlink(pack / "artifacts" / "jira" / "JIRA-42.json", pack / "artifacts" / "slack" / "JIRA-COPY.json")
    with closing(Store.open(pack)) as store:
        assert store.query("SELECT count(*) FROM artifacts WHERE id = 'JIRA-COPY'")[0][0] == 1


def test_verify_reports_an_outside_source_as_ge108_and_reads_nothing(layout):
    pack, elsewhere = layout
    set_sources(pack, artifacts="../elsewhere")
    result = verify(pack, level=1)
    (hit,) = result.by_rule("GE108")
    assert hit.file == str(pack / "groundeval.yaml") and "--allow-outside" in hit.message


def test_allowed_on_the_command_line_the_outside_files_load(layout, capsys):
    pack, elsewhere = layout
    os.symlink(elsewhere / "SECRET-1.json", pack / "artifacts" / "jira" / "SECRET-1.json")
    set_sources(pack, events="../elsewhere/events.jsonl")
    code, out, err = cli(capsys, "info", str(pack))
    assert code == 2 and "--allow-outside" in err and "Traceback" not in err
    code, out, err = cli(capsys, "--allow-outside", str(elsewhere), "info", str(pack))
    assert code == 0, err
    with closing(Store.open(pack)) as store:  # the flag stays for the process: the API sees it too
        assert store.query("SELECT body FROM artifact_text WHERE id = 'SECRET-1'")[0][0] == SECRET
