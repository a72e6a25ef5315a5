"""`python -m signoff.cli`: the same as the `signoff` command."""

from . import main

main()
