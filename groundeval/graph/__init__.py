"""The event graph: causal edges, distractor pairs and silence records, derived set-wise in DuckDB."""
