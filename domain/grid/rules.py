"""What tells the grid games apart, as data: one frozen record per variant.

A house variant is a new `GridRules` (it can even be decoded from JSON); the engine reads
every difference from here, and the record's `scoring` names one of the scoring functions.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from events.schema.grid import Source

Scoring = Literal["hang-ten", "tens", "golf", "basketball"]


class DeckSize(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Up to `players` players, the stock is `decks` 52-card decks plus `jokers` jokers."""

    players: int
    decks: int
    jokers: int = 0


class GridRules(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    title: str
    min_players: int
    max_players: int
    columns: int
    """Every layout is 2 rows of this many columns."""
    decks: tuple[DeckSize, ...]
    """By player count, smallest first: the first entry whose `players` is reached."""
    turn_up: Literal["centre", "discard", "none"]
    """After the deal, the next stock card becomes Hang Ten's centre card, or starts the
    shared discard pile, or nothing is turned up."""
    piles: Literal["own", "shared"]
    """Each player has their own discard pile, or all share one."""
    draw_from: tuple[Source, ...]
    setup_flips: int
    setup_rule: Literal["rows-apart", "not-adjacent", "same-column", "any"]
    """`rows-apart`: each flip in a row of its own and no two in a column (Hang Ten);
    `not-adjacent`: no two orthogonally adjacent (Tens); `same-column`: all in one column
    (Golf)."""
    setup_when: Literal["before-play", "first-turn"]
    """All players together before the first turn, or each at the start of their first turn."""
    peek_row: int | None
    """Basketball: the row a player may look at once before their first draw."""
    replace: Literal["any", "face-down"]
    discard_stock_card: Literal["never", "no-flip", "flip", "flip-unless-last"]
    """Whether a card drawn from the stock may be discarded and what that forces: nothing,
    a compulsory flip, or (Golf) a compulsory flip unless one face-down card is left."""
    keep_taken_card: bool
    """A card taken from a pile or the centre must be placed in the layout."""
    last_card_choice: bool
    """Golf: with one face-down card left after replacing or discarding, the player chooses
    to go out (turn it up) or to end the turn."""
    end: Literal["went-out", "all-face-up"]
    """A player with every card face up gives every other player one more turn, or the hand
    ends when every card of every layout is face up."""
    hands: int | None
    """A game is this many hands, unless the options say otherwise."""
    ends_beyond: int | None
    """The game ends after a hand in which a cumulative total is above this or below minus
    this (Tens: 100)."""
    high_wins: bool
    scoring: Scoring
    turn_limit: int = 60

    def deck_for(self, players: int) -> DeckSize:
        for size in self.decks:
            if players <= size.players:
                return size
        raise ValueError(f"{self.title}: no deck for {players} players")


HANG_TEN_RULES = GridRules(
    name="hang-ten",
    title="Hang Ten",
    min_players=4,
    max_players=6,
    columns=5,
    decks=(DeckSize(6, 4),),
    turn_up="centre",
    piles="own",
    draw_from=("stock", "centre", "pile"),
    setup_flips=2,
    setup_rule="rows-apart",
    setup_when="before-play",
    peek_row=None,
    replace="any",
    discard_stock_card="no-flip",
    keep_taken_card=False,
    last_card_choice=False,
    end="went-out",
    hands=10,
    ends_beyond=None,
    high_wins=False,
    scoring="hang-ten",
)

TENS_RULES = GridRules(
    name="tens",
    title="Tens",
    min_players=2,
    max_players=9,
    columns=5,
    decks=(DeckSize(3, 1), DeckSize(6, 2), DeckSize(9, 3)),
    turn_up="none",
    piles="own",
    draw_from=("stock", "pile"),
    setup_flips=3,
    setup_rule="not-adjacent",
    setup_when="before-play",
    peek_row=None,
    replace="any",
    discard_stock_card="never",
    keep_taken_card=True,
    last_card_choice=False,
    end="went-out",
    hands=None,
    ends_beyond=100,
    high_wins=False,
    scoring="tens",
)

GOLF_RULES = GridRules(
    name="golf",
    title="Golf",
    min_players=2,
    max_players=8,
    columns=4,
    decks=(DeckSize(5, 2, 4), DeckSize(8, 3, 6)),
    turn_up="discard",
    piles="shared",
    draw_from=("stock", "discard"),
    setup_flips=2,
    setup_rule="same-column",
    setup_when="first-turn",
    peek_row=None,
    replace="any",
    discard_stock_card="flip-unless-last",
    keep_taken_card=True,
    last_card_choice=True,
    end="went-out",
    hands=9,
    ends_beyond=None,
    high_wins=False,
    scoring="golf",
)

BASKETBALL_RULES = GridRules(
    name="basketball",
    title="Basketball",
    min_players=2,
    max_players=8,
    columns=5,
    decks=(DeckSize(4, 1), DeckSize(8, 2)),
    turn_up="discard",
    piles="shared",
    draw_from=("stock", "discard"),
    setup_flips=0,
    setup_rule="any",
    setup_when="before-play",
    peek_row=1,
    replace="face-down",
    discard_stock_card="flip",
    keep_taken_card=True,
    last_card_choice=False,
    end="all-face-up",
    hands=1,
    ends_beyond=None,
    high_wins=True,
    scoring="basketball",
)


def check(rules: GridRules) -> GridRules:
    """The record, if its parts fit together; ValueError naming the first that does not."""
    problems = []
    if not 1 <= rules.columns <= 5:
        problems.append("a layout has 1 to 5 columns")
    if not 2 <= rules.min_players <= rules.max_players <= 16:
        problems.append("players must be a range within 2..16")
    if not rules.decks or rules.decks[-1].players < rules.max_players:
        problems.append("the decks must cover every player count")
    if "discard" in rules.draw_from and rules.piles != "shared":
        problems.append("drawing from `discard` needs a shared pile")
    if "pile" in rules.draw_from and rules.piles != "own":
        problems.append("drawing from another player's `pile` needs own piles")
    if ("centre" in rules.draw_from) != (rules.turn_up == "centre"):
        problems.append("a centre card is turned up exactly when it may be drawn")
    if rules.turn_up == "discard" and rules.piles != "shared":
        problems.append("the card turned up after the deal starts a shared pile")
    if "stock" not in rules.draw_from:
        problems.append("the stock is always a draw source")
    if not 0 <= rules.setup_flips <= 2 * rules.columns:
        problems.append("setup flips must fit the layout")
    if rules.peek_row not in (None, 0, 1):
        problems.append("the peek row is 0 or 1")
    if rules.hands is None and rules.ends_beyond is None:
        problems.append("a game needs a number of hands or a total to end beyond")
    if problems:
        raise ValueError(f"{rules.title}: " + "; ".join(problems))
    for size in rules.decks:
        cards = 52 * size.decks + size.jokers
        if cards <= size.players * 2 * rules.columns + 1:
            raise ValueError(f"{rules.title}: {cards} cards are too few for {size.players}")
    return rules
