"""A local Telegram Bot API emulator for end-to-end tests and a sandbox."""
