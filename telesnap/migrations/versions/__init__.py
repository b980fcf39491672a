"""Alembic revisions, one file per revision, named by date."""
