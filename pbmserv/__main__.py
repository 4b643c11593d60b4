import sys

from pbmserv.cli.main import main

sys.exit(main())
