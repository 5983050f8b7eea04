"""Helpers shared by the whole test suite (service discovery, throw-away databases)."""
