"""The audit of a game's stored history: the chain, the commitments, the deck, every move's
legality, the scores and the winners, checked by the decider that played it."""

from service.audit.audit import audit_game
from service.audit.report import AuditReport, CheckResult, Failure

__all__ = ["AuditReport", "CheckResult", "Failure", "audit_game"]
