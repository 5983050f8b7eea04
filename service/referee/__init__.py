"""The referee: it plays a seat whose turn clock ran out, or that resigned, with the greedy
bot, so every table finishes."""
