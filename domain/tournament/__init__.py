"""Tournaments: the pure parts (standings, seating), folded from a tournament's events."""
