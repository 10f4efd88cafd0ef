"""The pure scorer and run-level aggregation."""
