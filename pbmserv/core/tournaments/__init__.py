"""Tournaments as the server runs them: entries, rounds of boards, results and their mail.

The pure rules (formats, pairing, standings) are in :mod:`pbmserv.tournaments`; this package
binds them to the database and to the commands.
"""
