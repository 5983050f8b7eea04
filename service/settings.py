"""The one settings object, read from the environment once."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec


class Settings(msgspec.Struct, frozen=True):
    database_url: str | None = None
    """PostgreSQL; when unset the embedded file store in `data_dir` is used."""
    redis_url: str | None = None
    data_dir: Path = Path("var")
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    log_level: str = "info"
    log_format: str = "auto"
    """`json`, `console`, or `auto` (console on a terminal, JSON otherwise)."""
    max_body_bytes: int = 16 * 1024
    rate_limit_per_second: float = 200.0
    rate_limit_burst: int = 400
    """Token bucket per client address (the peer, or what a trusted proxy reports)."""
    trusted_proxies: tuple[str, ...] = ()
    """Addresses or CIDRs of reverse proxies whose X-Forwarded-For names the client."""
    pool_size: int = 10
    db_timeout: float = 2.0
    """Seconds one database operation may take, the wait for a pooled connection included;
    past it the request is answered 503 `unavailable` with Retry-After."""
    command_retries: int = 5
    header_timeout: float = 10.0
    """Seconds a client has to send a complete request head, counted from when the connection
    opens or, on a kept-alive one, from the next request's first byte."""
    keep_alive_timeout: float = 5.0
    """Seconds an idle keep-alive connection stays open between requests."""
    max_connections: int = 4096
    """Open connections per worker; one more is answered 503 and closed. Lowered at start to
    fit under the process's descriptor limit."""

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        default = cls()
        return cls(
            database_url=get("DATABASE_URL"),
            redis_url=get("REDIS_URL"),
            data_dir=Path(get("FAIRWAY_DATA_DIR") or default.data_dir),
            host=get("FAIRWAY_HOST") or default.host,
            port=int(get("FAIRWAY_PORT") or default.port),
            workers=int(get("FAIRWAY_WORKERS") or default.workers),
            log_level=(get("FAIRWAY_LOG_LEVEL") or default.log_level).lower(),
            log_format=(get("FAIRWAY_LOG_FORMAT") or default.log_format).lower(),
            max_body_bytes=int(get("FAIRWAY_MAX_BODY_BYTES") or default.max_body_bytes),
            rate_limit_per_second=float(
                get("FAIRWAY_RATE_LIMIT_PER_SECOND") or default.rate_limit_per_second
            ),
            rate_limit_burst=int(get("FAIRWAY_RATE_LIMIT_BURST") or default.rate_limit_burst),
            pool_size=int(get("FAIRWAY_POOL_SIZE") or default.pool_size),
            db_timeout=float(get("FAIRWAY_DB_TIMEOUT") or default.db_timeout),
            trusted_proxies=tuple(
                p.strip() for p in (get("FAIRWAY_TRUSTED_PROXIES") or "").split(",") if p.strip()
            ),
            header_timeout=float(get("FAIRWAY_HEADER_TIMEOUT") or default.header_timeout),
            keep_alive_timeout=float(
                get("FAIRWAY_KEEP_ALIVE_TIMEOUT") or default.keep_alive_timeout
            ),
            max_connections=int(get("FAIRWAY_MAX_CONNECTIONS") or default.max_connections),
        )
