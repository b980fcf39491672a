"""Deciding each Snap race when its tie window closes, and answering its callers."""
