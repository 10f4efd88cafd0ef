"""A command resolves its contract once: one :class:`ResolvedPack` flows from the entry point
(``groundeval.evaluate``, the CLI's ``PACK`` argument) down, and no stage resolves the pack name
again, looks for its manifest again or reads it again."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

import groundeval
import groundeval.cli.main
import groundeval.contract.manifest
import groundeval.contract.packs
import groundeval.store.store
import groundeval.verifier.context
import groundeval.verifier.engine
from groundeval.contract.manifest import ResolvedPack, resolve
from groundeval.contract.packs import bundled_pack

ORIGINAL = Path(__file__).resolve().parent / "packs" / "original"
# name -> the module that defines it
COUNTED = {
    "resolve_pack": groundeval.contract.packs,  # a pack argument to a folder
    "find_manifest": groundeval.contract.manifest,  # a folder to its manifest
    "read_manifest_yaml": groundeval.contract.manifest,  # the manifest's text read and parsed
    "validated_manifest": groundeval.contract.manifest,  # the parsed manifest validated
}


@pytest.fixture
def counts(monkeypatch) -> Counter:
    """Calls of the COUNTED functions, wherever a module holds them, except the calls handed a
    ResolvedPack (those answer from what it already read)."""
    seen: Counter = Counter()
    for name, home in COUNTED.items():
        original = getattr(home, name)

        def counted(*args, _name=name, _original=original, **kwargs):
            if not (args and isinstance(args[0], ResolvedPack)):
                seen[_name] += 1
            return _original(*args, **kwargs)

        for module_name, module in list(sys.modules.items()):
            if module_name.startswith("groundeval") and getattr(module, name, None) is original:
                monkeypatch.setattr(module, name, counted)
    return seen


ONCE = {name: 1 for name in COUNTED}


@pytest.mark.parametrize("pack", ["tiny", str(ORIGINAL)], ids=["bundled-name", "original-format"])
def test_evaluate_resolves_and_reads_the_pack_once(counts, tmp_path, pack):
    result = groundeval.evaluate(pack, "oracle", tmp_path / "run")
    assert result.report.overall.n > 0
    assert dict(counts) == ONCE


@pytest.mark.slow
def test_the_cli_resolves_the_pack_argument_once_for_the_whole_command(counts, tmp_path):
    groundeval.cli.main.main(["eval", "tiny", "--agent", "oracle", "-q", "-o", str(tmp_path / "run")])
    assert (tmp_path / "run" / "report.json").is_file()
    assert dict(counts) == ONCE


def test_a_resolved_pack_is_its_path_and_keeps_what_it_read(counts):
    pack = resolve("tiny")
    assert pack == str(bundled_pack("tiny")) and pack.given == "tiny" and Path(pack) == pack.path
    assert resolve(pack) is pack
    first, _node = pack.manifest_yaml()
    first["name"] = "changed by its reader"
    again, _node = pack.manifest_yaml()
    assert again["name"] != first["name"]  # each reader gets its own copy
    assert pack.paths() is pack.paths() and pack.paths().manifest.name == again["name"]
    assert dict(counts) == ONCE
