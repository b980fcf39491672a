"""Figures, ratings, leaderboards and the history of ended games."""
