"""The pure Snap rules engine: cards, state, actions, operations and the race."""
