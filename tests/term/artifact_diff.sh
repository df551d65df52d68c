#!/bin/sh
# The artifact an attempt wrote, against the previous attempt's: each attempt's declared
# artifacts are kept in the run folder; d shows the unified diff, o hands the attempt's
# copy to $PAGER and takes the terminal back.
. "$(dirname "$0")/lib.sh"

TEST_ENV="PAGER='cat >$TMPD/paged'"
start 120 40 --demo --gate none
wait_for "finished — passed" 60
# corvid rewrote its review in attempt 2
keys j j j
wait_for "Step log .* corvid Review the Corvid"
keys 2 g
keys / "Result in" Enter
keys Enter
wait_for "result · step corvid · attempt 1"
# attempt 1 has nothing before it
keys d
wait_for "attempt 1 is the step's first with a result"
keys Escape
wait_gone "result · step corvid"
keys n Enter
wait_for "result · step corvid · attempt 2"
expect "1\. reviews/corvid-analytics\.md"
keys d
wait_for "diff reviews/corvid-analytics\.md · attempt 1 → 2 · \+[0-9]+ −[0-9]+"
expect "^│--- attempt 1/reviews/corvid-analytics\.md"
expect "^│\+\+\+ attempt 2/reviews/corvid-analytics\.md"
expect "^│@@ -1,6 \+1,9 @@"
expect "^│-- \*\*Term \(cl\. 1\):\*\* 36 months from 1 July 2024"
expect "^│\+- \*\*Notice \(cl\. 9\.2\):\*\* non-renewal notice must reach Corvid"
expect "^│ # Review: Corvid analytics subscription|^│ - \*\*Termination"
keys Escape
wait_for "result · step corvid · attempt 2"
refute "diff reviews/corvid"
# o: the attempt's copy in $PAGER (here a command that keeps what it is given)
keys o
wait_for "reviews/corvid-analytics\.md as attempt 2 left it"
expect "result · step corvid · attempt 2"
grep -q "by 1 April 2027" "$TMPD/paged" || fail "the pager did not get attempt 2's copy"
keys Escape
wait_gone "result · step corvid"
expect_titles
keys q
wait_for "PEVTUI-EXIT=0" 10
