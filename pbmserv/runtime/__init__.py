"""Running the server: the supervisor and its child processes, the loop that processes the
inbox (one transaction a batch), delivery's and maintenance's loops, and the robots' child."""
