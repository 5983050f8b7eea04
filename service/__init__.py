"""Fairway's service: the domain and the event store put to work, laid out by capability.
Floors, lowest first: contract, ops, play; live, read, referee, tournaments, audit; http, cli."""
