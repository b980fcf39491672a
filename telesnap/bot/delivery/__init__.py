"""Sending: each chat's sender, the pace, showing the outbox's rows, and what is said directly."""
