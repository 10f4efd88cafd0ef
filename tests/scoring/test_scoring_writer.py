"""ScoresWriter puts scores.jsonl in place only when every line is written: whatever fails
(a score, a write, the final rename) or interrupts it, no temporary file is left, no folder
made for it stays, and an existing scores.jsonl keeps its bytes."""

from __future__ import annotations

import pytest
from test_scoring_score_line import _one

import groundeval.scoring.io as scoring_io
from groundeval.scoring.io import ScoresWriter


def _left(root) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("batch", [4096, 1])  # interrupted before, or after, the first batch is written
@pytest.mark.parametrize("error", [KeyboardInterrupt, ValueError])
def test_an_error_in_the_block_leaves_nothing(tmp_path, monkeypatch, batch, error):
    monkeypatch.setattr(ScoresWriter, "BATCH", batch)
    with pytest.raises(error), ScoresWriter(tmp_path / "new" / "deeper" / "scores.jsonl") as sink:
        sink.add(_one())
        raise error
    assert _left(tmp_path) == []


def test_a_failed_rename_leaves_no_temporary_file(tmp_path):
    """``scores.jsonl`` is a folder: the rename onto it fails, and the temporary file goes."""
    (tmp_path / "scores.jsonl").mkdir()
    with pytest.raises(OSError), ScoresWriter(tmp_path / "scores.jsonl") as sink:
        sink.add(_one())
    assert _left(tmp_path) == ["scores.jsonl"]


@pytest.mark.parametrize("batch", [4096, 1])  # the failing write at the end, or part way
def test_a_failed_write_leaves_nothing_and_the_old_file(tmp_path, monkeypatch, batch):
    monkeypatch.setattr(ScoresWriter, "BATCH", batch)
    (tmp_path / "scores.jsonl").write_text("old\n")

    class Full:
        def __init__(self, path, mode):
            self.fh = open(path, mode)  # noqa: SIM115 - closed by close()

        def write(self, data):
            raise OSError(28, "No space left on device")

        def close(self):
            self.fh.close()

    monkeypatch.setattr(scoring_io, "open", Full, raising=False)
    with pytest.raises(OSError), ScoresWriter(tmp_path / "scores.jsonl") as sink:
        sink.add(_one())
        sink.add(_one())
    assert _left(tmp_path) == ["scores.jsonl"] and (tmp_path / "scores.jsonl").read_text() == "old\n"


def test_a_temporary_file_that_cannot_be_made_leaves_no_folder(tmp_path, monkeypatch):
    def refuse(path, mode):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(scoring_io, "open", refuse, raising=False)
    with pytest.raises(PermissionError), ScoresWriter(tmp_path / "new" / "deeper" / "scores.jsonl") as sink:
        sink.add(_one())
    assert _left(tmp_path) == []


def test_the_file_is_in_place_after_the_block(tmp_path):
    with ScoresWriter(tmp_path / "new" / "scores.jsonl") as sink:
        sink.add(_one())
    assert _left(tmp_path) == ["new", "new/scores.jsonl"]


def test_a_temporary_file_of_someone_else_is_kept_when_none_was_made(tmp_path):
    """An error before the first line is written: ``scores.jsonl.tmp`` was not this writer's."""
    (tmp_path / "scores.jsonl.tmp").write_text("theirs")
    with pytest.raises(ValueError), ScoresWriter(tmp_path / "scores.jsonl"):
        raise ValueError
    assert (tmp_path / "scores.jsonl.tmp").read_text() == "theirs"
