#!/bin/sh
echo "unit tests need cmocka: install the Debian package libcmocka-dev and re-run ./configure" >&2
exit 1
