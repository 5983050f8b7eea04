"""Commands: the one path by which any stream (a game, a tournament) changes: load it, ask
who may, replay a used key, check the expected version, decide, append, retry on conflict."""
