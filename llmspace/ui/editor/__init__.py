"""Thread editor views (header, panels, message list, cards)."""
