#!/bin/sh
# stage-copy SOURCE DEST: copy a built plugin to DEST as a new file, renamed
# into place. `cp SOURCE DEST` rewrites DEST's inode in place, and a program
# still running from the build tree with DEST loaded (a long accel-bench
# under accel-check, a test) then finds its mapped code truncated (SIGBUS)
# or changed under it (SIGILL, SIGSEGV); after a rename it keeps the old
# file, and the next program loads the new one.
set -e
cp "$1" "$2.stage.$$"
mv -f "$2.stage.$$" "$2"
