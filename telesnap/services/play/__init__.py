"""Lobbies, turns and races: the changes to a game, under its topic's lock, with the game cache."""
