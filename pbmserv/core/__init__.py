"""The command core: parsing, dispatch and the game service. Knows nothing of mail.

Grouped by subject: accounts/ (sign-up, logins, addresses and their confirmation, bounces),
play/ (a board from challenge to end, and its mail), timing/ (clocks and vacations), ratings/,
robots/ (the robots as players), tournaments/, commands/ (one module a family of mail
commands, each with its help). At the top: the context a command runs in, the parser and
dispatch, the results a command gives, the operator's actions (admin), maintenance, the
digest and the operator's broadcast.
"""
