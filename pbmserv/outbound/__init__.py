"""Mail out: composing a mail from its templates (text, HTML, pictures), the outbox rows it is
queued as, headers made safe in one place (headers.py), DKIM signing, and delivery to the
relay or the spool with retries, leases and backoff; the relay's connection in relay/."""
