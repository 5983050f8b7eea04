"""The fault run (benchmarks/fault_run.py): the whole system as real processes on a
PostgreSQL and a Redis of its own, played over HTTP while it is broken on a schedule, then
checked for anything lost, duplicated or served wrong."""
