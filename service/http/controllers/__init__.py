"""One controller module per resource: games, the feed's stream, fairness, audit, the read
models, the lobby listing, tournaments, standings, ratings, variants, operations."""
