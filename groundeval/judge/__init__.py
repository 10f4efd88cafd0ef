"""LLM parts beside groundeval (optional; the ``openai`` or ``anthropic`` extra): a model's
wording of question texts, and LLM judges set against groundeval.

:mod:`groundeval.judge.prose` rewords generated questions with a model (every text
validated, else the template is kept); :func:`groundeval.judge.run.judge_run` asks a judge
to score every answer of a run (reference-free by default), and the report's judge section
(:mod:`groundeval.report.judge`) shows where the judge and groundeval disagree, per track.
Both read a model through :mod:`groundeval.agents.complete`. Nothing in the core imports
this package.
"""

__all__ = ["prose", "run"]  # the public modules
