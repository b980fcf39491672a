"""The durable outbox: rows written with each change, read back in order, leased, settled."""
