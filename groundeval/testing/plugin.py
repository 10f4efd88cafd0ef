"""pytest plugin entry point (``pytest --groundeval PACK``); hooks are added by the gate work."""
