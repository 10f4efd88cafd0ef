"""Silence's data: its truth (a trigger with or without its response, and the search space
an honest "no" must have checked) and the answer an agent submits. Read by the
candidates, the scorer, the question format and ``contracts/``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...models import StrictModel
from ...questions.answers import AnswerBase

__all__ = ["NAME", "SilenceAnswer", "SilenceTruth"]

NAME = "silence"


class SilenceTruth(StrictModel):
    track: Literal["silence"] = NAME
    exists: bool
    spec: str
    trigger_event_id: str
    trigger_event_type: str
    response_event_type: str
    response_event_id: str | None = None
    expected_search_space: list[str] = Field(description="Artifact ids an honest 'no' must have fetched.")
    expected_subsystems: list[str] = Field(default_factory=list)
    evidence_artifacts: list[str] = Field(default_factory=list, description="The response's artifacts, if any.")


class SilenceAnswer(AnswerBase):
    exists: bool
    evidence_artifacts: list[str] = Field(default_factory=list)
