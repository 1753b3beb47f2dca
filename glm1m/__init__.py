"""glm1m: a long-document workbench on GLM-4-9B-Chat-1M (CLI entry points)."""
