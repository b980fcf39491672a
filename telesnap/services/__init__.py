"""Use cases (lobby, play, settings, stats), independent of Telegram."""
