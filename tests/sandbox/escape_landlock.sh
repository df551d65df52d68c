#!/bin/sh
# The escape suite on a machine without bubblewrap: Landlock and seccomp alone (the probe's
# test hook leaves bubblewrap out).
PEVTUI_SANDBOX_LAYERS=landlock,seccomp
export PEVTUI_SANDBOX_LAYERS
. "${top_srcdir:-.}/tests/sandbox/escape.sh"
