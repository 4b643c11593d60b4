"""Mail: the SMTP listener, decoding, processing of the inbox, composing and delivering mail."""
