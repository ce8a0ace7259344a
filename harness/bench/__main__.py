import os
import sys

from .suite import main

os.environ.setdefault("PYTHONUNBUFFERED", "1")
sys.exit(main())
