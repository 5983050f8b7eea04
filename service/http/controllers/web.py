"""The pages under `/`: the lobby, a seat's table (`/play/{id}`), a spectator's
(`/watch/{id}`), a finished hand's replay with its fairness panel (`/replay/{id}?hand=N`), a
tournament's standings (`/standings/{id}`), an organiser's page (`/organise`), an exported
game verified in the browser (`/verify`), and their files under `/static/`, named by content
and cached for good.

Every answer carries a strict Content-Security-Policy: scripts and styles from this origin
only, none inline, no frames, no plugins; the pages call this origin's API and nothing else.
A page names the game in its path, never a token: tokens stay in the browser's storage."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, get
from litestar.params import Parameter

from service.contract.problems import ApiError
from service.http.params import GameId
from service.web.assets import bundle

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
_COMMON = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}
TournamentId = Annotated[str, Parameter(max_length=40, description="The tournament's id")]
AssetName = Annotated[str, Parameter(max_length=80, description="A file, by its hashed name")]
FOREVER = "public, max-age=31536000, immutable"


def page(name: str) -> Response[bytes]:
    return Response(
        bundle().pages[name],
        media_type="text/html; charset=utf-8",
        headers={**_COMMON, "Cache-Control": "no-cache"},
    )


class WebController(Controller):
    path = "/"
    include_in_schema = False

    @get("/", sync_to_thread=False)
    def lobby(self) -> Response[bytes]:
        return page("lobby.html")

    @get("/play/{game_id:str}", sync_to_thread=False)
    def seat_table(self, game_id: GameId) -> Response[bytes]:
        return page("table.html")

    @get("/watch/{game_id:str}", sync_to_thread=False)
    def spectator_table(self, game_id: GameId) -> Response[bytes]:
        return page("table.html")

    @get("/replay/{game_id:str}", sync_to_thread=False)
    def replay(self, game_id: GameId) -> Response[bytes]:
        return page("replay.html")

    @get("/standings/{tournament_id:str}", sync_to_thread=False)
    def standings(self, tournament_id: TournamentId) -> Response[bytes]:
        return page("standings.html")

    @get("/verify", sync_to_thread=False)
    def verify(self) -> Response[bytes]:
        return page("verify.html")

    @get("/organise", sync_to_thread=False)
    def organise(self) -> Response[bytes]:
        return page("organise.html")

    @get("/static/{name:str}", sync_to_thread=False)
    def asset(self, name: AssetName) -> Response[bytes]:
        found = bundle().assets.get(name)
        if found is None:
            raise ApiError(404, "not_found", f"no file {name!r}")
        return Response(
            found.body, media_type=found.media_type, headers={**_COMMON, "Cache-Control": FOREVER}
        )
