"""The Chainlit app (app.py routes) and the plain modules it routes to."""
