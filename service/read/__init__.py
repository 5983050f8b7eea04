"""The read side: the projection store and projector wiring, the read models served from it
(a finished hand's replay, a tournament's standings), and the replay of a finished hand."""
