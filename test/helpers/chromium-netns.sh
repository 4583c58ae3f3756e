#!/bin/sh
# Playwright's executablePath for test browsers: Chromium in a network namespace of its own
# (chromiumInNetns.mjs says why). Root unshares the namespace; anyone else gets one in a user namespace.
if [ "$(id -u)" -eq 0 ]; then
  exec unshare --net -- "$BACKYARD_BROWSER_NODE" "$(dirname "$0")/chromiumInNetns.mjs" "$BACKYARD_BROWSER_CHROMIUM" "$@"
fi
exec unshare --net --map-root-user -- "$BACKYARD_BROWSER_NODE" "$(dirname "$0")/chromiumInNetns.mjs" "$BACKYARD_BROWSER_CHROMIUM" "$@"
