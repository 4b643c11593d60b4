"""The command core: parsing, dispatch and the game service. Knows nothing of mail."""
