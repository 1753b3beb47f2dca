"""Helpers the tests share: real processes, a socket.io client for Chainlit, a fault proxy."""
