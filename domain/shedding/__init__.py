"""Tens-shedding (`tens-shedding`): its own decider, not the grid engine."""

from domain.shedding.decider import TENS_SHEDDING, TensShedding
from domain.shedding.greedy import GreedySheddingBot
from domain.shedding.scoring import RemainingScore, ScoreLine
from domain.shedding.state import SheddingState
from domain.shedding.view import SheddingTable, SheddingView

__all__ = [
    "TENS_SHEDDING",
    "GreedySheddingBot",
    "RemainingScore",
    "ScoreLine",
    "SheddingState",
    "SheddingTable",
    "SheddingView",
    "TensShedding",
]
