"""The HTTP edge: the app, its middleware and connection bounds, problem details, request
bodies, what the game resources share (parameters, summaries, the feed's chain), and one
controller module per resource (controllers/)."""
