"""Board pictures, for mail and (later) the web: a game's SVG drawn as a small palette PNG,
sprites drawn once and pasted. Imports only the games."""
