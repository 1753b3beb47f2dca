"""Everything about sizing and starting vLLM. Knows nothing about Chainlit."""
