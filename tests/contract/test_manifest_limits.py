"""Manifest input limits: hostile or broken manifests fail fast with a located error."""

from __future__ import annotations

from pathlib import Path

import pytest
from contract_cli import run_cli

from groundeval.contract import limits
from groundeval.contract.manifest import load_manifest
from groundeval.errors import ContractError

ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


def _manifest(pack: Path) -> Path:
    return pack / "groundeval.yaml"


def _append(pack: Path, text: str) -> None:
    path = _manifest(pack)
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _error(pack: Path) -> str:
    with pytest.raises(ContractError) as exc:
        load_manifest(pack)
    [problem] = exc.value.problems
    return f"{Path(problem.file).name}:{problem.line}: {problem.message}"


def test_alias_bomb_is_refused_before_expansion(pack, capsys):
    lines = len(_manifest(pack).read_text(encoding="utf-8").splitlines())
    _append(pack, "x_bomb:\n" + "".join("  " + line + "\n" for line in ALIAS_BOMB.splitlines()))
    assert f"expands to more than {limits.MAX_EXPANDED_NODES} values" in _error(pack)
    code, err = run_cli(["info", str(pack)], capsys)
    assert code == 2 and "Traceback" not in err and "groundeval.yaml:" in err
    code, out = run_cli(["verify", str(pack), "--level", "4"], capsys, stream="out")
    assert code == 1 and "GE101" in out and "expands to more than" in out
    assert lines > 0


def test_a_few_aliases_are_fine(pack):
    _append(pack, "description: &d a pack with anchors\nx_note: *d\n")
    with pytest.raises(ContractError) as exc:  # the alias itself loads; the unknown key is what fails
        load_manifest(pack)
    assert "x_note" in str(exc.value.problems[0].field or exc.value.problems[0].message)


def test_a_huge_line_names_its_line(pack):
    n = len(_manifest(pack).read_text(encoding="utf-8").splitlines())
    _append(pack, "description: " + "x" * (limits.MAX_LINE_CHARS + 1) + "\n")
    assert _error(pack) == f"groundeval.yaml:{n + 1}: line longer than {limits.MAX_LINE_CHARS} characters"


def test_a_huge_value_names_its_line(pack):
    n = len(_manifest(pack).read_text(encoding="utf-8").splitlines())
    _append(pack, "description: >\n" + "".join("  " + "y" * 5_000 + "\n" for _ in range(3)))
    assert _error(pack) == f"groundeval.yaml:{n + 1}: a key or value longer than {limits.MAX_STRING_CHARS} characters"


def test_deep_nesting_names_its_line(pack):
    n = len(_manifest(pack).read_text(encoding="utf-8").splitlines())
    _append(pack, "description: " + "[" * (limits.MAX_DEPTH + 5) + "]" * (limits.MAX_DEPTH + 5) + "\n")
    assert _error(pack) == f"groundeval.yaml:{n + 1}: nested deeper than {limits.MAX_DEPTH} levels"


def test_invalid_utf8_names_its_line(pack, capsys):
    path = _manifest(pack)
    data = path.read_bytes()
    n = data.count(b"\n")
    path.write_bytes(data + b"description: caf\xe9\n")
    assert _error(pack) == f"groundeval.yaml:{n + 1}: not valid UTF-8"
    code, out = run_cli(["verify", str(pack)], capsys, stream="out")
    assert code == 1 and "GE101" in out and "Traceback" not in out


def test_limits_keep_real_manifests_loading(repo_root):
    for path in sorted((repo_root / "domain_packs").glob("*/groundeval.yaml")):
        load_manifest(path)


# A bounded fuzz over manifest text: whatever the bytes, loading ends in a manifest or a
# located ContractError, never another exception.
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = [
    "&a [1, 2]",
    "*a",
    "[",
    "]",
    "{",
    "}",
    ": ",
    "- ",
    "\n",
    "  ",
    "\t",
    "'",
    '"',
    "\\ud800",
    "!!python/object",
    "%YAML 1.1\n",
    "---\n",
    "...\n",
    "x" * 50,
    "é",
    "\x00",
    "access:",
    "actors:",
    "roles:",
    "evaluation:",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_PIECES), max_size=30), st.integers(0, 10_000))
def test_fuzzed_manifests_load_or_fail_located(tmp_path_factory, pieces, at):
    root = tmp_path_factory.mktemp("fuzz")
    base = (Path(__file__).resolve().parents[2] / "domain_packs" / "tiny" / "groundeval.yaml").read_text("utf-8")
    at = at % (len(base) + 1)
    (root / "groundeval.yaml").write_text(
        base[:at] + "".join(pieces) + base[at:], encoding="utf-8", errors="surrogatepass"
    )
    try:
        load_manifest(root)
    except ContractError as exc:
        assert exc.problems and all(p.file for p in exc.problems)
