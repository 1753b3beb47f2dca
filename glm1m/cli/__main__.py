"""`python -m glm1m.cli ...`, the same as the `glm1m` command."""

from glm1m.cli.main import main

main()
