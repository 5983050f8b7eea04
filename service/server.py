"""`fairway serve`: uvicorn running the app, on the embedded store unless DATABASE_URL is set."""

from __future__ import annotations

import os

import uvicorn

from service.settings import Settings


def serve(host: str | None = None, port: int | None = None, workers: int | None = None) -> int:
    settings = Settings.from_env()
    host = host or settings.host
    port = port or settings.port
    workers = workers or settings.workers
    if workers > 1 and not settings.database_url:
        print(
            "fairway serve: several workers need DATABASE_URL (the embedded store is "
            "single-process); starting one worker"
        )
        workers = 1
    if not settings.database_url:
        os.makedirs(settings.data_dir, exist_ok=True)
        print(
            f"fairway: embedded event store in {settings.data_dir.resolve()} "
            "(set DATABASE_URL for PostgreSQL)"
        )
    print(f"fairway: serving on http://{host}:{port}  (OpenAPI: /schema/openapi.json)")
    uvicorn.run(
        "service.app:create_app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
        access_log=False,
    )
    return 0
