"""Alembic migration scripts, shipped inside the package (``telesnap:migrations``)."""
