"""The read side: the projection store and projector wiring, the read models served from it,
and the replay of a finished hand."""
