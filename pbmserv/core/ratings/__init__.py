"""Ratings: Elo and Glicko-2 updated by every rated board, the lists, and the replay of past
boards into Glicko-2."""
