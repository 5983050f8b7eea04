"""`create_app(settings)`: the one place the service is wired."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

from litestar import Litestar, Router, get
from litestar.config.cors import CORSConfig
from litestar.datastructures import CacheControlHeader
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme, Server, Tag
from litestar.response import Redirect
from litestar.static_files import create_static_files_router
from swagger_ui_bundle import swagger_ui_path

from events.feed import SharedFeed
from events.store import EventStore, Unreadable, close_feed, open_feed, open_store
from service.audit.keys import ReceiptKeys
from service.contract.receipts import ReceiptKey, load_or_create, parse_key_text
from service.http.background import background
from service.http.bodies import JsonRequest
from service.http.controllers.audit import AuditController, TournamentAuditController
from service.http.controllers.fairness import ReceiptKeyController, SeatSeedController
from service.http.controllers.games import GameController
from service.http.controllers.listing import ProjectionsController
from service.http.controllers.ops import OpsController
from service.http.controllers.ratings import RatingsController
from service.http.controllers.readmodels import PlayerController, ReadModelController
from service.http.controllers.standings import StandingsController
from service.http.controllers.stream import StreamController
from service.http.controllers.tournaments import TournamentController
from service.http.controllers.travellers import TravellersController
from service.http.controllers.variants import VariantController
from service.http.controllers.web import WebController
from service.http.lean import lean_actions
from service.http.middleware import StreamSlots, make_middleware
from service.http.openapi_doc import complete_when_built
from service.http.problems import EXCEPTION_HANDLERS
from service.http.ratelimit import rate_limit
from service.live.watch import Watcher
from service.ops import collector
from service.ops.background import Background
from service.ops.logging import configure_logging, log
from service.ops.metrics import Metrics
from service.ops.settings import Settings
from service.play.games import GameService
from service.read.projections import ProjectionService
from service.referee.referee import utc_now
from service.tournaments.duplicate import DuplicateGate
from service.tournaments.service import TournamentService

DESCRIPTION = """\
Fairway hosts five Golf-family card games. Open a game, claim seats (each claim returns a
secret seat token), start it with the creator token, then let each seat act with its token
in `Authorization: Bearer <token>`. Every response holds only what its viewer may know.

Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`.
Actions honour `Idempotency-Key` (safe retries) and `If-Match` (the game version).
"""


ASSETS = "/schema/assets"
"""Swagger UI's files, served by the app itself so that the API pages need no internet."""


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Fairway",
        version="1.0.0",
        description=DESCRIPTION,
        # Relative: requests go wherever the document was fetched from.
        servers=[Server(url="/")],
        tags=[
            Tag(name="games", description="Play: lobby, views, actions, scores, events"),
            Tag(name="variants", description="The rules and a layout scorer"),
            Tag(name="operations", description="Health, readiness, metrics"),
            Tag(name="audit", description="Replay of finished hands, the audit, the export"),
            Tag(name="tournaments", description="Organise a tournament: players, rounds"),
        ],
        components=Components(
            security_schemes={
                "seatToken": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="A seat token (from claimSeat) or the creator token "
                    "(from createGame).",
                )
            }
        ),
        # The first plugin also answers at /schema itself.
        render_plugins=[
            SwaggerRenderPlugin(
                js_url=f"{ASSETS}/swagger-ui-bundle.js",
                css_url=f"{ASSETS}/swagger-ui.css",
                standalone_preset_js_url=f"{ASSETS}/swagger-ui-standalone-preset.js",
                favicon=f"<link rel='icon' type='image/png' href='{ASSETS}/favicon-32x32.png'>",
            ),
            JsonRenderPlugin(),
        ],
        path="/schema",
    )


@get("/docs", include_in_schema=False, sync_to_thread=False)
def docs() -> Redirect:
    return Redirect("/schema/swagger")


def swagger_assets() -> Router:
    return create_static_files_router(
        ASSETS,
        directories=[Path(str(swagger_ui_path))],
        name="swagger-assets",
        cache_control=CacheControlHeader(max_age=86400, public=True),
    )


def cors_config(origins: tuple[str, ...]) -> CORSConfig | None:
    """Browsers on `origins` may call the API and read the headers a client needs; with no
    origins configured, no CORS header is ever sent."""
    if not origins:
        return None
    return CORSConfig(
        allow_origins=list(origins),
        allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
        allow_headers=[
            "Authorization",
            "Content-Type",
            "Idempotency-Key",
            "If-Match",
            "If-None-Match",
            "Last-Event-ID",
        ],
        expose_headers=["ETag", "Location", "Retry-After", "X-Request-Id"],
        max_age=600,
    )


def create_app(
    settings: Settings | None = None,
    store: EventStore | None = None,
    *,
    referee_clock: Callable[[], datetime] = utc_now,
) -> Litestar:
    """`referee_clock`: the time as the referee reads it (tests move it on rather than wait
    out turn clocks; service/referee/referee.py)."""
    settings = settings or Settings.from_env()
    configure_logging(settings.log_level, settings.log_format)
    metrics = Metrics(settings.instance)
    limiter = rate_limit(
        settings.redis_url,
        settings.redis_prefix,
        settings.rate_limit_per_second,
        settings.rate_limit_burst,
        metrics,
    )
    stream_slots = StreamSlots(settings.max_streams_per_client)
    holder: dict[str, object] = {}

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        opened = store or await open_store(
            settings.database_url,
            settings.data_dir,
            pool_max_size=settings.pool_size,
            db_timeout=settings.db_timeout,
            group_commit=settings.group_commit,
        )
        holder["store"] = opened
        # The feed's readers (below) read a replica when FAIRWAY_FEED_DATABASE_URL names one;
        # commands load and append on the primary (events/store/replica.py).
        try:
            feed = holder["feed"] = await open_feed(
                opened,
                settings.feed_database_url,
                pool_max_size=settings.pool_size,
                db_timeout=settings.db_timeout,
            )
        except BaseException:
            if store is None:
                await opened.close()
            raise
        keyring = ReceiptKeys(opened, receipt_key(settings), settings.receipt_retired_keys)
        await keyring.register()
        holder["keyring"] = keyring

        def unreadable(_stream_id: str, _version: int, found: Unreadable) -> None:
            metrics.count_by("events_unreadable", "kind", found.kind)

        readers = {id(s): s for s in (opened, feed)}.values()  # one, or the primary and replica
        for each in readers:
            each.unreadable.listeners.append(unreadable)
        opened.append_batches.append(metrics.observe_append_batch)
        holder["games"] = GameService(
            opened,
            metrics,
            settings.command_retries,
            cache_events=settings.cache_events,
            cache_finished=settings.cache_finished_games,
            receipt_key=keyring.signing,
            seed_chain_hands=settings.seed_chain_hands,
        )
        holder["gate"] = DuplicateGate(holder["games"])  # type: ignore[arg-type]
        watcher = holder["watcher"] = Watcher(feed, holder["games"])  # type: ignore[arg-type]
        watcher.start()
        tournaments = TournamentService(
            opened,
            holder["games"],  # type: ignore[arg-type]
            metrics,
            settings.command_retries,
            admin_key=settings.admin_key,
        )
        holder["tournaments"] = tournaments
        # One feed for every consumer of it in this process (the projector, and where this
        # process leads the referee, the bots and the round keeper): one read a wake-up.
        shared = SharedFeed(feed)
        projections = ProjectionService(settings, opened, feed, shared)
        holder["projections"] = projections
        if not projections.shared:
            projections.start()  # this process's own read models, fed by the store
        games: GameService = holder["games"]  # type: ignore[assignment]
        metrics.sample("cache_events", lambda: games.cache.events)
        metrics.sample("cache_games", lambda: len(games.cache))
        sampler = Background("fairway-metrics", lambda: _sampling(metrics))
        if metrics.multiprocess:
            sampler.start()
        leaders = background(
            settings, opened, shared, games, tournaments, projections, metrics, referee_clock
        )
        for leader in leaders:
            leader.start()
        log.info(
            "started",
            store=type(opened).__name__,
            feed=type(feed).__name__,
            referee=settings.referee,
            bots=settings.bots,
            background=settings.background,
        )
        try:
            yield
        finally:
            for leader in leaders:
                await leader.stop()
            await watcher.stop()
            await projections.close()
            await sampler.stop()
            await limiter.close()
            metrics.close()
            for each in readers:
                each.unreadable.listeners.remove(unreadable)
            opened.append_batches.remove(metrics.observe_append_batch)
            await close_feed(feed, opened)
            if store is None:
                await opened.close()
            log.info("stopped")

    app = Litestar(
        route_handlers=[
            GameController,
            AuditController,
            TournamentAuditController,
            VariantController,
            OpsController,
            docs,
            swagger_assets(),
            ProjectionsController,
            SeatSeedController,
            ReceiptKeyController,
            StreamController,
            ReadModelController,
            PlayerController,
            TournamentController,
            StandingsController,
            TravellersController,
            RatingsController,
            WebController,
        ],
        dependencies={
            "store": Provide(lambda: holder["store"], sync_to_thread=False),
            "feed": Provide(lambda: holder["feed"], sync_to_thread=False),
            "games": Provide(lambda: holder["games"], sync_to_thread=False),
            "keyring": Provide(lambda: holder["keyring"], sync_to_thread=False),
            "tournaments": Provide(lambda: holder["tournaments"], sync_to_thread=False),
            "metrics": Provide(lambda: metrics, sync_to_thread=False),
            "watcher": Provide(lambda: holder["watcher"], sync_to_thread=False),
            "gate": Provide(lambda: holder["gate"], sync_to_thread=False),
            "spectator_delay": Provide(lambda: settings.spectator_delay, sync_to_thread=False),
            "sse_heartbeat": Provide(lambda: settings.sse_heartbeat, sync_to_thread=False),
            "sse_lifetime": Provide(lambda: settings.sse_lifetime, sync_to_thread=False),
            "stream_slots": Provide(lambda: stream_slots, sync_to_thread=False),
            "projections": Provide(lambda: holder["projections"], sync_to_thread=False),
            "reader": Provide(
                lambda: holder["projections"].reader,  # type: ignore[attr-defined]
                sync_to_thread=False,
            ),
        },
        lifespan=[lifespan],
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=openapi_config(),
        cors_config=cors_config(settings.cors_origins),
        request_class=JsonRequest,
        request_max_body_size=settings.max_body_bytes,
        logging_config=None,
        debug=False,
    )
    # Around the router rather than inside each route, so that it sees every request.
    # The action route's common requests are answered in front of the router (lean.py).
    middleware = make_middleware(metrics, limiter, stream_slots, settings.trusted_proxies)
    games = lean_actions(app, app.asgi_handler, lambda: holder["games"])  # type: ignore[arg-type, return-value]
    app.asgi_handler = middleware(games)
    complete_when_built(app)
    return app


async def _sampling(metrics: Metrics, every: float = 5.0) -> None:
    """With several workers: this worker's sampled gauges, kept current for whoever answers
    the scrape (service/ops/metrics.py)."""
    while True:
        metrics.refresh()
        await asyncio.sleep(every)


def receipt_key(settings: Settings) -> ReceiptKey:
    """The configured receipt key, else the one kept in the data directory (made once)."""
    if settings.receipt_key is not None:
        return parse_key_text(settings.receipt_key)
    key, created = load_or_create(settings.data_dir)
    if settings.database_url is not None:
        # Instances on other machines each make their own key. Their receipts still check
        # everywhere (each registers its key in the database), but one shared key is simpler
        # to keep, to rotate and to tell the players.
        log.warning(
            "receipt_key_from_data_dir",
            path=str(settings.data_dir),
            created=created,
            key_id=key.key_id,
            advice="instances sharing this database should share one receipt key: set "
            "FAIRWAY_RECEIPT_KEY or FAIRWAY_RECEIPT_KEY_FILE on each. This instance's key is "
            "registered in the database meanwhile, so every instance accepts its receipts",
        )
    return key


def create_app_from_env() -> Litestar:
    """The factory `fairway serve` hands to uvicorn (one per worker process)."""
    app = create_app(Settings.from_env())
    collector.settle()  # what start-up built lives as long as the process
    return app
