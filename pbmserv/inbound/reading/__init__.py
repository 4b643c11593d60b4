"""Reading one message: MIME, charsets and encodings decoded, HTML made text, the command
lines found (Subject or body, quotes and signatures left out), and whether it must not be
answered (bounces, auto-replies, lists, our own mail). Never raises on hostile input."""
