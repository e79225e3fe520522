import sys

from recjudge.cli import main

sys.exit(main())
