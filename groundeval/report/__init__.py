"""Run reports: rendering, compare and the regression gate."""
