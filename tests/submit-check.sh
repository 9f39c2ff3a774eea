#!/bin/sh
# Every call into a plugin's table goes through host/submit.h (issue 15):
# fail when a file of host/ other than submit.c and submit.h calls a table
# entry or reads one, and name each line.
#
#   tests/submit-check.sh HOST_DIR
#
# The one file allowed is driver_table.c: the loader's check of the whole
# table (every required entry non-NULL) before anything in it is called.
set -u
dir=${1:?usage: submit-check.sh HOST_DIR}
[ -d "$dir" ] || { echo "submit-check: no directory $dir" >&2; exit 2; }

# A call or read through a device's table (->drv->), a call through any
# table pointer or copy (drv->entry(, drv.entry(), and a presence test of an
# entry (drv->entry == NULL) outside ACCEL__DRV_HAS.
pattern='->drv->|drv(->|\.)[a-z_0-9]+[[:space:]]*\(|drv->[a-z_0-9]+[[:space:]]*[!=]=[[:space:]]*NULL'

found=$(cd "$dir" && grep -nE -- "$pattern" ./*.c ./*.h |
    grep -vE '^\./(submit\.c|submit\.h|driver_table\.c):')
if [ -n "$found" ]; then
    echo "calls into a plugin's table outside host/submit.c (use the" \
         "ACCEL__DRV_* macros of host/submit.h):"
    echo "$found"
    exit 1
fi
echo "every plugin table call in $dir goes through submit.h"
