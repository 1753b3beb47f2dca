"""Code that runs inside vLLM's own interpreter, where glm1m is not installed: `glm1m serve` puts
this folder (not the checkout) on vLLM's PYTHONPATH, so its modules import nothing from glm1m."""
