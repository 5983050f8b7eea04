"""The one settings object, read from the environment once.

Each variable is read by a small typed parser; a value it cannot use stops the service with a
`SettingsError` naming the variable, before anything starts.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

import msgspec

from service.contract.receipts import b64url, from_b64url, parse_key_text

T = TypeVar("T")

LOG_FORMATS = ("json", "console", "auto")
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
BACKGROUND_MODES = ("leader", "always", "never")


class SettingsError(ValueError):
    """The environment variable `name` holds a value the service cannot use."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name} {message}")
        self.name = name
        self.message = message


class Settings(msgspec.Struct, frozen=True):
    database_url: str | None = None
    """PostgreSQL; when unset the embedded file store in `data_dir` is used."""
    feed_database_url: str | None = None
    """FAIRWAY_FEED_DATABASE_URL: a physical streaming replica (hot standby) of DATABASE_URL
    from which the feed's readers read (the projector, the live streams' watcher, the
    referee, the bots, the round keeper); commands still load and append on the primary.
    Unset: they read the primary (events/store/replica.py, docs/SCALING.md)."""
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
    cors_origins: tuple[str, ...] = ()
    """Origins (`https://play.example`) whose pages may call the API from a browser; none
    by default, and `*` for any."""
    pool_size: int = 10
    group_commit: bool = True
    """Appends that arrive while another commits go together in the next transaction
    (events/store/postgres_group.py); off: one transaction per append."""
    db_timeout: float = 2.0
    """Seconds one database operation may take, the wait for a pooled connection included;
    past it the request is answered 503 `unavailable` with Retry-After."""
    command_retries: int = 5
    cache_events: int = 400_000
    """The games kept in memory weigh at most this many events in all: about 150 B an event,
    and a game counts 8 events more for itself (about 1.3 KB); 400,000 is about 60 MB."""
    cache_finished_games: int = 200
    header_timeout: float = 10.0
    """Seconds a client has to send a complete request head, counted from when the connection
    opens or, on a kept-alive one, from the next request's first byte."""
    keep_alive_timeout: float = 5.0
    """Seconds an idle keep-alive connection stays open between requests."""
    max_connections: int = 4096
    """Open connections per worker; one more is answered 503 and closed. Lowered at start to
    fit under the process's descriptor limit."""
    max_connections_per_client: int = 256
    """Open connections one client address (the rate limiter's client) may hold per worker,
    never more than three quarters of `max_connections`: the rest stays for everyone else.
    One more closes that client's own connection idle longest, or is answered 429."""
    max_streams_per_client: int = 64
    """Live event streams one client address may hold open per worker; one more is 429."""
    body_timeout: float = 10.0
    """Seconds a request body has to arrive whole after its head, plus one for each
    `body_min_rate` bytes it has sent; past that it is answered 408 and the connection closed."""
    body_min_rate: int = 1024
    """Bytes a second a request body must keep up to be given more than `body_timeout`."""
    sse_lifetime: float = 600.0
    """Seconds an event stream lasts at most (between 90 and 100 % of it, spread so that
    streams opened together do not come back together); it then ends with a reconnect hint
    and the client resumes with Last-Event-ID."""
    redis_prefix: str = "fw"
    """The first part of every Redis key the projections write (one Redis, several
    installations or test runs)."""
    projector_inline: bool = False
    """With REDIS_URL: also run the projector inside `fairway serve` (tests, small installs);
    without REDIS_URL it always runs inside, on the in-memory store."""
    receipt_key: str | None = None
    """Base64 of the 32-byte Ed25519 seed that signs receipts (FAIRWAY_RECEIPT_KEY, or read
    from FAIRWAY_RECEIPT_KEY_FILE); unset: a key generated once into `data_dir`."""
    seed_chain_hands: int = 1000
    """Hands covered by a seed chain in a game without a fixed number of hands."""
    receipt_retired_keys: tuple[str, ...] = ()
    """Public keys (base64url, 32 bytes) that signed receipts before a rotation: served
    beside the current key so that old receipts still verify."""
    sse_heartbeat: float = 15.0
    """Seconds between keep-alive comments on an idle event stream (GET /games/{id}/stream),
    so that proxies and clients do not take a quiet game for a dead connection."""
    spectator_delay: int = 0
    """Spectators see each game this many seat actions behind (0: live), so that nobody can
    relay a live table to a player; seats are never delayed, and a finished game is shown
    whole."""
    referee: bool = True
    """Run the referee in this process (service/referee/referee.py): it plays the turns whose clock
    ran out and the seats that resigned. Off: a deployment runs it elsewhere (`fairway
    referee`); any number may run, each turn is played once."""
    referee_tick: float = 1.0
    """Seconds the referee waits at most between two looks at the clock (it also wakes at
    each append and at the earliest deadline)."""
    bots: bool = True
    """Run the bot runner in this process (service/bots/runner.py): it plays the seats bots
    hold. Off: a deployment runs it elsewhere (`fairway bots`); any number may run, each bot
    move is made once."""
    bot_think: float = 0.8
    """Seconds a bot waits before it moves, so that a spectator can follow the table (0:
    at once)."""
    bot_concurrency: int = 8
    """The most bot moves this process decides and appends at once (inside `fairway serve`,
    at most half of `pool_size`, so the bots never starve the players' requests)."""

    admin_key: str | None = None
    """FAIRWAY_ADMIN_KEY: when set, creating a tournament needs it (`Authorization: Bearer
    <key>`); unset, anyone may create one."""
    round_keeper: bool = True
    """FAIRWAY_ROUND_KEEPER: close tournament rounds from this process when their last game
    ends (service/tournaments/rounds.py). Any number of processes may; each round closes once."""
    instance: str | None = None
    """FAIRWAY_INSTANCE: the name /metrics gives this instance (`fairway_instance_info`);
    unset, the host name and the pid of `fairway serve`."""
    background: str = "leader"
    """FAIRWAY_BACKGROUND: where the feed's consumers this process is set to run (the
    referee, the bots, the round keeper, an inline projector on Redis) run: `leader`, in the
    one process of the deployment that holds the lead (service/ops/leader.py); `always`, in
    every process; `never`, in none of this one's."""
    shutdown_grace: float = 10.0
    """FAIRWAY_SHUTDOWN_GRACE: seconds a stopping instance (SIGTERM) gives the requests in
    flight to finish; it stops taking new ones and ends its event streams with a reconnect
    hint at once, and cancels what is left when the grace is over."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read every variable once; raises `SettingsError` for the first unusable one."""
        read = _Environment(os.environ if env is None else env)
        default = cls()
        database_url = read.text("DATABASE_URL")
        feed_database_url = read.text("FAIRWAY_FEED_DATABASE_URL")
        if feed_database_url and not database_url:
            raise SettingsError(
                "FAIRWAY_FEED_DATABASE_URL",
                "needs DATABASE_URL: it names a replica of that PostgreSQL primary (the "
                "embedded store has none)",
            )
        return cls(
            database_url=database_url,
            feed_database_url=feed_database_url,
            redis_url=read.text("REDIS_URL"),
            data_dir=Path(read.text("FAIRWAY_DATA_DIR") or default.data_dir),
            host=read.text("FAIRWAY_HOST") or default.host,
            port=read("FAIRWAY_PORT", default.port, integer(0, 65535)),
            workers=read("FAIRWAY_WORKERS", default.workers, integer(1)),
            log_level=read("FAIRWAY_LOG_LEVEL", default.log_level, one_of(LOG_LEVELS)),
            log_format=read("FAIRWAY_LOG_FORMAT", default.log_format, one_of(LOG_FORMATS)),
            max_body_bytes=read("FAIRWAY_MAX_BODY_BYTES", default.max_body_bytes, integer(1)),
            rate_limit_per_second=read(
                "FAIRWAY_RATE_LIMIT_PER_SECOND", default.rate_limit_per_second, positive
            ),
            rate_limit_burst=read("FAIRWAY_RATE_LIMIT_BURST", default.rate_limit_burst, integer(1)),
            trusted_proxies=read("FAIRWAY_TRUSTED_PROXIES", (), each(network)),
            cors_origins=read("FAIRWAY_CORS_ORIGINS", (), each(origin)),
            pool_size=read("FAIRWAY_POOL_SIZE", default.pool_size, integer(1)),
            group_commit=read("FAIRWAY_GROUP_COMMIT", default.group_commit, flag),
            db_timeout=read("FAIRWAY_DB_TIMEOUT", default.db_timeout, positive),
            cache_events=read("FAIRWAY_CACHE_EVENTS", default.cache_events, integer(0)),
            cache_finished_games=read(
                "FAIRWAY_CACHE_FINISHED_GAMES", default.cache_finished_games, integer(0)
            ),
            header_timeout=read("FAIRWAY_HEADER_TIMEOUT", default.header_timeout, positive),
            keep_alive_timeout=read(
                "FAIRWAY_KEEP_ALIVE_TIMEOUT", default.keep_alive_timeout, positive
            ),
            max_connections=read("FAIRWAY_MAX_CONNECTIONS", default.max_connections, integer(1)),
            max_connections_per_client=read(
                "FAIRWAY_MAX_CONNECTIONS_PER_CLIENT", default.max_connections_per_client, integer(1)
            ),
            max_streams_per_client=read(
                "FAIRWAY_MAX_STREAMS_PER_CLIENT", default.max_streams_per_client, integer(1)
            ),
            body_timeout=read("FAIRWAY_BODY_TIMEOUT", default.body_timeout, positive),
            body_min_rate=read("FAIRWAY_BODY_MIN_RATE", default.body_min_rate, integer(1)),
            sse_lifetime=read("FAIRWAY_SSE_LIFETIME", default.sse_lifetime, positive),
            redis_prefix=read("FAIRWAY_REDIS_PREFIX", default.redis_prefix, key_prefix),
            projector_inline=read("FAIRWAY_PROJECTOR_INLINE", default.projector_inline, flag),
            receipt_key=read.one_of(
                ("FAIRWAY_RECEIPT_KEY", receipt_key), ("FAIRWAY_RECEIPT_KEY_FILE", receipt_key_file)
            ),
            seed_chain_hands=read(
                "FAIRWAY_SEED_CHAIN_HANDS", default.seed_chain_hands, integer(1, 100_000)
            ),
            receipt_retired_keys=read("FAIRWAY_RECEIPT_RETIRED_KEYS", (), each(public_key)),
            sse_heartbeat=read("FAIRWAY_SSE_HEARTBEAT", default.sse_heartbeat, positive),
            spectator_delay=read(
                "FAIRWAY_SPECTATOR_DELAY", default.spectator_delay, integer(0, 10_000)
            ),
            referee=read("FAIRWAY_REFEREE", default.referee, flag),
            referee_tick=read("FAIRWAY_REFEREE_TICK", default.referee_tick, positive),
            bots=read("FAIRWAY_BOTS", default.bots, flag),
            bot_think=read("FAIRWAY_BOT_THINK", default.bot_think, non_negative),
            bot_concurrency=read(
                "FAIRWAY_BOT_CONCURRENCY", default.bot_concurrency, integer(1, 10_000)
            ),
            admin_key=read.text("FAIRWAY_ADMIN_KEY"),
            round_keeper=read("FAIRWAY_ROUND_KEEPER", default.round_keeper, flag),
            instance=read.text("FAIRWAY_INSTANCE"),
            background=read("FAIRWAY_BACKGROUND", default.background, one_of(BACKGROUND_MODES)),
            shutdown_grace=read("FAIRWAY_SHUTDOWN_GRACE", default.shutdown_grace, positive),
        )


class _Environment:
    """The variables, each read with a parser; a blank value counts as unset."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    def text(self, name: str) -> str | None:
        return self._env.get(name, "").strip() or None

    def one_of(self, *choices: tuple[str, Callable[[str], str]]) -> str | None:
        """The one of these variables that is set, parsed; two set is an error."""
        given = [(name, parse) for name, parse in choices if self.text(name) is not None]
        if len(given) > 1:
            raise SettingsError(given[1][0], f"and {given[0][0]} are both set: set one")
        return self(given[0][0], None, given[0][1]) if given else None

    def __call__(self, name: str, default: T, parse: Callable[[str], T]) -> T:
        text = self.text(name)
        if text is None:
            return default
        try:
            return parse(text)
        except ValueError as error:
            raise SettingsError(name, str(error)) from None


# The parsers: text in, a value out, or a ValueError that completes "FAIRWAY_X ...".


def integer(low: int, high: int | None = None) -> Callable[[str], int]:
    """A whole number from `low` to `high` (no upper bound when None)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"must be an integer, not {text!r}") from None
        if value < low or (high is not None and value > high):
            bounds = f"at least {low}" if high is None else f"between {low} and {high}"
            raise ValueError(f"must be {bounds}, not {value}")
        return value

    return parse


def non_negative(text: str) -> float:
    """A finite number of 0 or more (a pause that may be none)."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"must be a number, not {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"must be a number of 0 or more, not {text!r}")
    return value


def positive(text: str) -> float:
    """A finite number greater than 0 (a timeout or a rate)."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"must be a number, not {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"must be a number greater than 0, not {text!r}")
    return value


def one_of(choices: tuple[str, ...]) -> Callable[[str], str]:
    """One of `choices`, in any case."""

    def parse(text: str) -> str:
        if text.lower() not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}, not {text!r}")
        return text.lower()

    return parse


def network(text: str) -> str:
    """An IP address or CIDR."""
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise ValueError(f"must hold IP addresses or CIDRs, not {text!r}") from None
    return text


def origin(text: str) -> str:
    """`*`, or a browser origin: scheme, host and optional port, nothing after."""
    if text == "*":
        return text
    parts = urlsplit(text)
    extra = parts.path not in ("", "/") or parts.query or parts.fragment or parts.username
    if parts.scheme not in ("http", "https") or not parts.hostname or extra:
        raise ValueError(f"must hold origins such as https://play.example, not {text!r}")
    return text.rstrip("/")


def receipt_key(text: str) -> str:
    """Base64 of a 32-byte Ed25519 seed."""
    parse_key_text(text)
    return text.strip()


def public_key(text: str) -> str:
    """An Ed25519 public key: base64url (or base64) of 32 bytes."""
    try:
        key = from_b64url(text.replace("+", "-").replace("/", "_").rstrip("="))
    except ValueError:
        key = b""
    if len(key) != 32:
        raise ValueError(f"must hold base64url Ed25519 public keys of 32 bytes, not {text!r}")
    return b64url(key)


def receipt_key_file(text: str) -> str:
    """A file holding base64 of a 32-byte Ed25519 seed: its contents."""
    try:
        contents = Path(text).read_text()
    except OSError as error:
        raise ValueError(f"cannot be read ({error.strerror}): {text!r}") from None
    try:
        return receipt_key(contents)
    except ValueError as error:
        raise ValueError(f"names a file that {error}") from None


def each(parse: Callable[[str], str]) -> Callable[[str], tuple[str, ...]]:
    """A comma-separated list, blanks dropped, each item parsed."""

    def parse_all(text: str) -> tuple[str, ...]:
        return tuple(parse(item.strip()) for item in text.split(",") if item.strip())

    return parse_all


def key_prefix(text: str) -> str:
    """Letters, digits, `_` and `-`, at most 32: safe inside a Redis key and a SCAN pattern."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", text):
        raise ValueError(f"must be 1 to 32 letters, digits, _ or -, not {text!r}")
    return text


def flag(text: str) -> bool:
    """true/false, yes/no, on/off, 1/0."""
    value = text.lower()
    if value in ("true", "yes", "on", "1"):
        return True
    if value in ("false", "no", "off", "0"):
        return False
    raise ValueError(f"must be true or false, not {text!r}")
