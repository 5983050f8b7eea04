"""`python -m service.cli`: the `fairway` command."""

import sys

from service.cli.commands import main

sys.exit(main())
