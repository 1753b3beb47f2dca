"""The command door: `main.py` builds the parser; one module per subcommand."""
