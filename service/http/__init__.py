"""The HTTP edge: the app, its middleware and connection bounds, problem details, request
bodies, and one controller module per resource (controllers/)."""
