"""PostgreSQL: a committed outbox row wakes the worker that holds its chat (NOTIFY).

A worker that commits a row while another worker holds the chat's lease leaves the
row to that one; the holder learns of it from this notification (channel
``telesnap_outbox``, the chat's id as payload), sent when the row's transaction
commits. SQLite has one process, which hands the rows over itself: nothing to do.

Revision ID: c7e2f4a81d95
Revises: b3d1e7a09c44
Create Date: 2026-12-03 13:00:00+00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "c7e2f4a81d95"
down_revision: str | Sequence[str] | None = "b3d1e7a09c44"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        """
        CREATE FUNCTION telesnap_outbox_notify() RETURNS trigger AS $$
        BEGIN
            PERFORM pg_notify('telesnap_outbox', NEW.chat_id::text);
            RETURN NULL;
        END
        $$ LANGUAGE plpgsql
        """
    )
    op.execute(
        "CREATE TRIGGER telesnap_outbox_notify AFTER INSERT ON outbox_messages"
        " FOR EACH ROW EXECUTE FUNCTION telesnap_outbox_notify()"
    )


def downgrade() -> None:
    """Revert this revision."""
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER telesnap_outbox_notify ON outbox_messages")
    op.execute("DROP FUNCTION telesnap_outbox_notify()")
