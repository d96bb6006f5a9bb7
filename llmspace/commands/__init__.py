"""Command-line command groups; each module exposes `register(subparsers)`."""
