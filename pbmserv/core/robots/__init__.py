"""The robots as players in the database: who they are, which turns are theirs, a turn thought
about and carried out, and the secret seed of their generators (the search is pbmserv.robots)."""
