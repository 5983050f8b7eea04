"""The REST API load generator of benchmarks/api_load.py, by job: the HTTP clients
(client), the open-loop pace (pacing), the bots that play over HTTP (bots), the CPU and
connections of the processes under load (processes), the server under test (server), the
measured windows (phases), their figures (stats) and how they are printed (report); and
boardgame.io as a second server under test for benchmarks/side_by_side.py (bgio)."""
