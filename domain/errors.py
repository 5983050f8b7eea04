"""Rule violations: a rejected command names the rule it broke with a stable code."""

from __future__ import annotations

# The stable codes a client can rely on; the API returns them verbatim in problem details.
CODES: dict[str, str] = {
    "game_not_started": "the game has no hand in play yet",
    "game_over": "the game has ended; no further actions are possible",
    "hand_over": "the hand has ended and the next one has not been dealt",
    "not_your_turn": "another seat is to act",
    "invalid_seat": "there is no such seat in this game",
    "wrong_phase": "the action does not fit the current step of the turn or hand",
    "setup_incomplete": "setup actions must be finished first",
    "illegal_position": "that position may not be chosen for this action",
    "card_not_available": "that card or pile is not available to take or play",
    "must_keep_card": "the drawn card must be placed in the layout, not discarded",
    "already_done": "that action can be taken only once and has been taken",
    "invalid_play": "the cards played break the playing rules",
    "unknown_action": "the action does not exist in this variant",
    "invalid_config": "the game options or player count are not allowed for this variant",
    # Tournaments (domain/tournament/decide.py).
    "name_taken": "another player of the tournament has that name",
    "registration_closed": "players register before the first round starts",
    "unknown_player": "no player of the tournament has that name",
    "player_withdrawn": "the player has withdrawn from the tournament",
    "round_in_play": "a round is in play; the next starts once it has closed",
    "tournament_over": "the tournament has ended (or played all its rounds)",
    "not_enough_players": "too few active players to fill one table",
    "no_round_in_play": "no round is in play",
    # Bots (domain.variants.BOT_KINDS).
    "unknown_bot_level": "no bot plays at that level; the answer names the levels",
}


class RuleViolation(Exception):
    """A command broke a rule. The state it was decided against is unchanged."""

    def __init__(self, code: str, message: str) -> None:
        if code not in CODES:
            raise ValueError(f"unregistered rule violation code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"RuleViolation({self.code!r}, {self.message!r})"
