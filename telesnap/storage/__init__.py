"""Persistence: SQLAlchemy 2 models, engine set-up, repositories and unit of work."""
