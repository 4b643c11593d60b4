"""The `pbmserv` command line."""
