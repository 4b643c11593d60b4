"""The relay: one SMTP session over TLS or not, its login, a login refused for good holding
the outbox, and a relay's refusal of a recipient counted as a bounce."""
