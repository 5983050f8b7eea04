"""Tournaments: the organiser's commands, the round keeper that closes rounds, and the
duplicate gate that hides a round's deals until every table has played them."""
