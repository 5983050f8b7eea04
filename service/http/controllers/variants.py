"""/variants: what can be played, and a layout scorer for clients' score previews."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import Annotated

from litestar import Controller, get, post
from litestar.params import Parameter

from domain.variants import DECIDERS
from service.contract.problems import ApiError
from service.contract.schemas import Score, ScoreRequest, VariantInfo
from service.http import docs


@cache
def rules_text(variant: str) -> str:
    rules = files("service.contract.rules")
    return (
        rules.joinpath(f"{variant}.md").read_text() + "\n" + rules.joinpath("common.md").read_text()
    )


def info(name: str) -> VariantInfo:
    decider = DECIDERS[name]
    return VariantInfo(
        name,  # type: ignore[arg-type]
        decider.min_players,
        decider.max_players,
        list(decider.options),  # type: ignore[arg-type]
        rules_text(name),
    )


def known(variant: str) -> str:
    if variant not in DECIDERS:
        raise ApiError(
            404, "variant_not_found", f"no variant {variant!r}; known: {', '.join(DECIDERS)}"
        )
    return variant


VariantPath = Parameter(
    description="hang-ten, tens, golf, basketball or tens-shedding", max_length=40
)


class VariantController(Controller):
    path = "/variants"
    tags = ["variants"]

    @get("/", operation_id="listVariants", summary="The five variants", responses=docs.VARIANT_LIST)
    async def list_variants(self) -> list[VariantInfo]:
        return [info(name) for name in DECIDERS]

    @get(
        "/{variant:str}",
        operation_id="getVariant",
        summary="One variant and its rules",
        responses=docs.VARIANT,
    )
    async def get_variant(self, variant: str = VariantPath) -> VariantInfo:
        return info(known(variant))

    @post(
        "/{variant:str}/score",
        operation_id="scoreLayout",
        status_code=200,
        summary="Score a layout (grid variants) or remaining cards (tens-shedding)",
        responses=docs.SCORE,
    )
    async def score(
        self, data: Annotated[ScoreRequest, docs.SCORE_BODY], variant: str = VariantPath
    ) -> Score:
        decider = DECIDERS[known(variant)]
        if variant == "tens-shedding":
            if not all(isinstance(card, str) for card in data.cards):
                raise ApiError(
                    422,
                    "invalid_request",
                    'tens-shedding scores a flat list of cards: {"cards": [...]}',
                )
            score: Score = decider.score(list(data.cards))
            return score
        rows = data.cards
        if len(rows) != 2 or not all(isinstance(row, list) for row in rows):
            raise ApiError(
                422, "invalid_request", 'a grid layout is two rows: {"cards": [[row 0], [row 1]]}'
            )
        layout: Score = decider.score([list(row) for row in rows])
        return layout
