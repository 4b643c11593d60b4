"""Accounts and addresses: sign-up, logins and passwords, confirming an address (one held
request a code), bounces marking an address and the vacation they begin, unsubscribing."""
