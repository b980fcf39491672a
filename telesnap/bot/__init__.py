"""The Telegram layer: handlers, keyboards, rendering, application builder."""
