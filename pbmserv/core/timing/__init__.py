"""Time: correspondence clocks per seat (capped Fischer), the sweep that ends boards whose time
ran out, and the vacation bank that stops a player's clocks."""
