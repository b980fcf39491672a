"""Small mechanisms every layer but the game repeats: a bounded dict, backoff, a background loop.

One home each, so that a limit, a delay or a loop's stop is written once.
"""
