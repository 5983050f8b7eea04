"""The bot runner: it plays the seats that bots hold (service/bots/runner.py), each move
through the one command path as the seat's own turn (service/bots/moves.py)."""
