"""Play: games as this process knows them (record, cache, lobby, turn clocks) and the commands
that change them (open, claim, start, act, seed, resign, play for a seat)."""
