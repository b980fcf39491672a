"""telesnap: play the card game Snap asynchronously in Telegram group chats."""

__version__ = "0.1.0"
