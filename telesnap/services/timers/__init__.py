"""Turn timers, automatic flips and lobby expiry: planned, stored, fired."""
