"""Provenance's truth and answer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from groundeval.models import StrictModel
from groundeval.questions.answers import AnswerBase

NAME = "provenance"


class ProvenanceTruth(StrictModel):
    track: Literal["provenance"] = NAME
    recorded: bool
    event_id: str
    artifacts: list[str] = Field(default_factory=list)


class ProvenanceAnswer(AnswerBase):
    recorded: bool
