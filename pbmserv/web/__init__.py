"""The read-only web view (issue 50): a page for every board and position, its pictures and
records, the list of games and the rules, for the public and, through a private link, for a
seat's own player. :func:`pbmserv.web.app.make_app` builds the site; ``serving.py`` runs it.

It reads through ``core/`` (the one projection, ``core/play/positions.py``) and ``pictures/``,
never through the mail wings, and changes nothing: its engine only reads.
"""
