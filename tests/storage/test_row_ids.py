"""Generated row ids are 64-bit: they do not run out after a few hundred days of busy play."""

from __future__ import annotations

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telesnap.storage.models import Chat, Game, GamePlayer, OutboxMessage, Timer, User
from telesnap.storage.models.base import utc_now

BEYOND_32_BITS = 2**31 + 5
WIDENED = {
    ("games", "id"),
    ("outbox_messages", "id"),
    ("timers", "id"),
    ("races", "id"),
    ("game_results", "id"),
    ("game_players", "game_id"),
    ("game_operations", "game_id"),
    ("timers", "game_id"),
    ("outbox_messages", "game_id"),
    ("races", "game_id"),
    ("game_results", "game_id"),
    ("game_player_results", "game_id"),
    ("game_player_results", "result_id"),
    ("player_stats", "last_game_id"),
}


async def _number_games_from(session: AsyncSession, first: int) -> None:
    """Make the next game's id ``first``, as years of games would."""
    if session.bind.dialect.name == "postgresql":
        await session.execute(
            text("SELECT setval(pg_get_serial_sequence('games', 'id'), :last)"), {"last": first - 1}
        )
    else:  # SQLite numbers a row one past the largest id
        session.add(Game(id=first - 1, chat_id=-5, creator_id=1, status="finished"))
        await session.flush()


async def test_a_game_numbered_beyond_32_bits_round_trips_with_its_rows(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    async with session_factory.begin() as session:
        session.add_all([Chat(id=-5, type="group"), User(id=1, first_name="Ann")])
        await session.flush()
        await _number_games_from(session, BEYOND_32_BITS)
        game = Game(chat_id=-5, creator_id=1)
        session.add(game)
        await session.flush()
        game_id = game.id
        session.add(GamePlayer(game_id=game_id, seat=0, user_id=1))
        session.add(Timer(game_id=game_id, chat_id=-5, kind="turn", due_at=utc_now()))
        session.add(OutboxMessage(chat_id=-5, game_id=game_id, kind="board", payload={}))
    assert game_id == BEYOND_32_BITS
    async with session_factory() as session:
        assert (await session.scalar(select(GamePlayer.game_id))) == BEYOND_32_BITS
        assert (await session.scalar(select(Timer.game_id))) == BEYOND_32_BITS
        assert (await session.scalar(select(OutboxMessage.game_id))) == BEYOND_32_BITS


async def test_postgresql_stores_the_ids_and_their_sequences_as_bigint(engine: AsyncEngine) -> None:
    if engine.dialect.name != "postgresql":
        return  # SQLite's INTEGER PRIMARY KEY is 64-bit whatever the declared type
    async with engine.connect() as connection:
        rows = await connection.execute(
            text(
                "SELECT table_name, column_name, data_type FROM information_schema.columns"
                " WHERE table_schema = 'public'"
            )
        )
        types = {(table, column): kind for table, column, kind in rows}
        sequences = await connection.execute(
            text("SELECT sequencename, data_type::text FROM pg_sequences")
        )
        sequence_types = dict(sequences.all())
    assert {types[column] for column in WIDENED} == {"bigint"}
    widened_sequences = {f"{table}_id_seq" for table, column in WIDENED if column == "id"}
    assert {sequence_types[name] for name in widened_sequences} == {"bigint"}
