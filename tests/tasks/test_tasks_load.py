"""Bad task contracts: every problem located (file, line, field), exit 2, no traceback."""

from __future__ import annotations

import pytest

from groundeval.cli.main import main
from groundeval.errors import ContractError
from groundeval.tasks import dump_contract, example, load_contract, parse_contract

GOOD = (example("support") / "task.yaml").read_text(encoding="utf-8")


def _problems(text: str) -> list:
    with pytest.raises(ContractError) as exc:
        parse_contract(text, "t.yaml")
    return exc.value.problems


def test_the_example_loads_and_round_trips_through_yaml():
    c = load_contract(example("support"))
    assert c.reviewed and set(c.roles) == {"triage", "billing"}
    assert parse_contract(dump_contract(c)) == c


def test_unknown_key_is_located_at_its_line():
    text = GOOD.replace("    write: true\n    once_per", "    write: true\n    wirte: true\n    once_per", 1)
    (p,) = _problems(text)
    line = text.splitlines().index("    wirte: true") + 1
    assert (p.file, p.line, p.field) == ("t.yaml", line, "tools.issue_refund.wirte")
    assert "unknown key" in p.message


def test_every_problem_is_reported_at_once():
    text = GOOD.replace("min: 0.01", "min: lots").replace("relation: le", "relation: about")
    problems = _problems(text)
    fields = {p.field for p in problems}
    assert "tools.issue_refund.arguments.amount.min" in fields
    assert any(f and f.startswith("decisions.0.evidence.1") and f.endswith("relation") for f in fields)
    assert all(p.line is not None for p in problems)


def test_bad_regex_unknown_role_and_yaml_syntax_are_located():
    text = GOOD.replace('pattern: "^ORD-[0-9]+$"}\n  lookup_policy', 'pattern: "^ORD-[0-9+$"}\n  lookup_policy')
    (p,) = _problems(text)
    line = next(i for i, x in enumerate(text.splitlines(), 1) if "[0-9+$" in x)
    assert p.field == "tools.lookup_order.arguments.order_id.pattern" and "compile" in p.message and p.line == line
    (p,) = _problems(GOOD.replace("{from: triage, to: billing}", "{from: triage, to: payroll}"))
    assert "payroll" in p.message
    (p,) = _problems("task: x\nroles: [unclosed\n")
    assert p.line is not None and "YAML" in p.message
    (p,) = _problems("- a list\n")
    assert p.line == 1


def test_cli_check_exit_codes(tmp_path, capsys):
    bad = tmp_path / "task.yaml"
    bad.write_text(GOOD.replace("reviewed: true", "reviewed: true\nreveiwed: true"))
    with pytest.raises(SystemExit) as exc:
        main(["tasks", "check", str(bad)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"{bad}:" in err and "reveiwed" in err and "Traceback" not in err
    main(["tasks", "check", "support"])
    assert "reviewed" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["tasks", "score", "support", str(tmp_path / "missing.json")])
    assert exc.value.code == 2
    notjson = tmp_path / "run.json"
    notjson.write_text('{"resourceSpans": [\n  {oops}\n]}')
    with pytest.raises(SystemExit) as exc:
        main(["tasks", "score", "support", str(notjson)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"{notjson}:2" in err
