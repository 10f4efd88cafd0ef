"""Read and write ``questions.json`` as canonical JSON (sorted keys, indent 2, UTF-8, newline)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from ..errors import ContractError
from .model import QuestionSet


def dumps(qs: QuestionSet) -> str:
    return json.dumps(qs.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_questions(qs: QuestionSet, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dumps(qs), encoding="utf-8")
    tmp.replace(path)
    return path


def read_questions(path: str | Path) -> QuestionSet:
    path = Path(path)
    try:
        return QuestionSet.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ContractError.single(str(path), "no such questions file") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ()))
        raise ContractError.single(str(path), err.get("msg", "invalid questions file"), field=where) from None
