"""The pages a person opens in a browser: the lobby, a seat's table, a spectator's table.

They are a client of the public REST API and the game's stream like any other, with no
private back door: this package only holds the files and names them by their content."""
