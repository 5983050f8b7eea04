"""Live: the feed watcher that wakes a game's streams, and what a spectator may see of a game
while it is played (the spectator delay)."""
