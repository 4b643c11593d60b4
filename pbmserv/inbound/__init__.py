"""Mail in: the SMTP listener, the IMAP reader of a hosted mailbox, the inbox a message is
committed to before it is acknowledged, and what is read of a message (reading/): its text,
its commands, whether it is automatic, its authentication results, a delivery report."""
