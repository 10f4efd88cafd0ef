"""The DuckDB store: loading (strict and lenient), tables, the contract digest and the visibility cone."""

__all__ = ["cone", "digest", "ingest", "lenient", "store", "witness"]  # the public modules
