"""Storage: models, engine and session helpers, migrations."""
