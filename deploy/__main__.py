"""``python -m deploy`` = ``python -m deploy.run``."""

import sys

from deploy.run import main

sys.exit(main())
