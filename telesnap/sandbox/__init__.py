"""``telesnap sandbox``: the real bot, the emulator and a browser page showing a group chat."""
