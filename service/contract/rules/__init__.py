"""The rules of each variant as text, served at GET /variants/{name}."""
