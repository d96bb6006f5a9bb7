"""settings package."""
