"""A lone surrogate in the manifest is bad input: exit 2 with line and field, for info and verify."""

from __future__ import annotations

import pytest

from contract_cli import run_cli
from groundeval.cli.main import main


@pytest.mark.parametrize(
    "old, new, field",
    [
        ("name: tiny", 'name: "ti\\ud800ny"', "name"),
        ("    - name: postmortem_after_resolution", '    - name: "pm\\udc00"', "evaluation.silence_pairs.0.name"),
        ("    engineer:\n", '    "eng\\ud801":\n', "access.roles.eng\\ud801"),
    ],
)
def test_lone_surrogate_in_manifest(pack, capsys, old, new, field):
    manifest = pack / "groundeval.yaml"
    text = manifest.read_text()
    assert old in text
    manifest.write_text(text.replace(old, new, 1))
    code, err = run_cli(["info", str(pack)], capsys)
    assert code == 2, err
    assert f"field '{field}'" in err and "lone surrogate" in err
    assert "Traceback" not in err
    # the verifier reports it as a located finding (exit 1: findings), never as its own failure
    code, out = run_cli(["verify", str(pack), "--format", "json"], capsys, stream="out")
    assert code == 1
    assert "GE101" in out and "lone surrogate" in out and "GE000" not in out


def test_paired_surrogates_are_fine(pack, capsys):
    manifest = pack / "groundeval.yaml"
    manifest.write_text(manifest.read_text().replace("name: tiny", 'name: "tiny \\U0001F600"', 1))
    main(["info", str(pack), "--json"])
    out = capsys.readouterr().out
    assert '"name": "tiny' in out
