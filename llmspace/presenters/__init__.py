"""presenters package."""
