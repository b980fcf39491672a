"""What the bot shows, as text, buttons and pictures, in the chat's language."""
