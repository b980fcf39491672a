"""One handler per command and per button, what they share, and the timers' loop."""
