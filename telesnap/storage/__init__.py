"""Persistence: SQLAlchemy 2 models, engine set-up, repositories and unit of work.

- :mod:`.database`: ``create_engine(url)`` and ``session_factory(engine)``.
- :mod:`.uow`: ``async with UnitOfWork(factory) as uow:`` with every repository.
- :mod:`.repositories`: users, chats, settings, games, history, updates, timers.
- :mod:`.models`: the tables; :mod:`.migrate`: ``upgrade_database(url)``.
- :mod:`.errors`: ``StorageError`` and its subclasses.
"""
