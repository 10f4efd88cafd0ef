"""Bundled packs by name (issue 17 item 1) and packs the verifier rejects (item 10)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_run import cli

from groundeval.contract.packs import bundled_packs, resolve_pack
from groundeval.errors import ContractError

REPO = Path(__file__).resolve().parents[2]


def test_bundled_packs_are_the_pack_folders_of_domain_packs():
    expected = sorted(
        p.parent.name for p in (REPO / "domain_packs").glob("*/groundeval.yaml") if not p.parent.name.startswith("_")
    )
    found = bundled_packs()
    assert list(found) == expected and "tiny" in found and "_build" not in found
    assert found["tiny"].resolve() == (REPO / "domain_packs" / "tiny").resolve()


def test_a_path_wins_over_a_bundled_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_pack("tiny") == bundled_packs()["tiny"]
    (tmp_path / "tiny").mkdir()
    assert resolve_pack("tiny") == Path("tiny")
    with pytest.raises(
        ContractError, match="no bundled pack or world of that name .*tiny.*bundled worlds: .*support_desk"
    ):
        resolve_pack("no-such-pack")
    with pytest.raises(ContractError, match="no such file or directory$"):
        resolve_pack("sub/no-such-pack")  # a path is never looked up among the bundled names


def test_packs_command(capsys):
    code, out, _ = cli(capsys, "packs", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["name"] for r in rows if r["kind"] == "pack"] == list(bundled_packs())
    tiny = next(r for r in rows if r["name"] == "tiny")
    assert tiny["description"].startswith("A checkout outage (INC-42)")
    code, out, _ = cli(capsys, "packs", "tiny")
    assert code == 0 and Path(out.strip()) == bundled_packs()["tiny"]
    code, _, err = cli(capsys, "packs", "nope")
    assert code == 2 and "bundled packs: " in err and "bundled worlds: support_desk" in err.replace("it_desk, ", "")
    code, out, _ = cli(capsys, "packs")
    assert code == 0 and all(name in out for name in bundled_packs())


def test_commands_take_a_bundled_name(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "info", "tiny", "--json")
    assert code == 0 and json.loads(out)["name"] == "tiny"
    code, _, _ = cli(capsys, "generate", "tiny", "-o", "q.json")
    assert code == 0 and json.loads(Path("q.json").read_text())["metadata"]["counts"]["total"] > 0
    code, out, _ = cli(capsys, "verify", "tiny", "--level", "2")
    assert code == 0
    code, _, err = cli(capsys, "info", "tinyy")
    assert code == 2 and "'tinyy': no such file or directory, and no bundled pack or world of that name" in err


# --------------------------------------------------------------------------- --force


@pytest.fixture
def bad_pack(tmp_path):
    """The tiny pack with an undefined role: loads, but the verifier's reference level rejects it."""
    pack = tmp_path / "bad"
    shutil.copytree(bundled_packs()["tiny"], pack)
    manifest = pack / "groundeval.yaml"
    text = manifest.read_text()
    assert "    alice: engineer\n" in text
    manifest.write_text(text.replace("    alice: engineer\n", "    alice: wizard\n"))
    return pack


COMMANDS = {
    "info": ["info", "{pack}"],
    "graph": ["graph", "{pack}", "-o", "{tmp}/g.json"],
    "generate": ["generate", "{pack}", "-o", "{tmp}/q.json"],
    "run": ["run", "{pack}", "--agent", "oracle", "--out", "{tmp}/run", "-q"],
    "eval": ["eval", "{pack}", "--agent", "oracle", "--out", "{tmp}/eval", "-q", "--level", "2"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_rejected_pack_is_refused_unless_forced(name, bad_pack, tmp_path, capsys):
    args = [a.format(pack=bad_pack, tmp=tmp_path) for a in COMMANDS[name]]
    code, out, err = cli(capsys, *args)
    assert code == 2, (out, err)
    assert "[GE202] actor 'alice' holds undefined role 'wizard'" in err
    assert "pass --force to use the pack anyway" in err and "Traceback" not in err
    code, out, err = cli(capsys, *args, "--force")
    assert code == 0, err
    assert "WARNING: --force: pack" in err and "has 1 verifier error(s)" in err and "GE202" in err


def test_serve_refuses_a_rejected_pack(bad_pack, tmp_path, capsys):
    questions = tmp_path / "q.json"
    assert cli(capsys, "generate", str(bad_pack), "-o", str(questions), "--force")[0] == 0
    code, _, err = cli(capsys, "serve", str(bad_pack), "--questions", str(questions))
    assert code == 2 and "GE202" in err and "pass --force" in err


@pytest.mark.parametrize("command", ["info", "verify", "generate"])
def test_a_pack_command_given_a_world_says_it_is_a_world(capsys, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, command, "support_desk")
    assert code == 2
    assert "this is a world" in err and "groundeval worlds check" in err and "Traceback" not in err
