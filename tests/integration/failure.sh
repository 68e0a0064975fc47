#!/usr/bin/env bash
# A failing rank stops the job; hvdrun exits with its code and says who.
. "$(dirname "$0")/lib.sh"

hvd -np 4 sh -c 'if [ $HOROVOD_RANK = 2 ]; then echo boom >&2; exit 7; fi'
check "exit code of the failing rank" [ "$RC" -eq 7 ]
check "summary names rank and code" grep -qF "rank 2 on localhost exited with code 7" "$TMP/err"
check "summary shows last stderr" grep -qx "  boom" "$TMP/err"

hvd -np 2 sh -c 'kill -KILL $$'
check "signal death gives 128+9" [ "$RC" -eq 137 ]
check "summary names the signal" grep -q "killed by signal 9" "$TMP/err"

hvd -np 3 true
check "all zero gives 0" [ "$RC" -eq 0 ]

# rank 0 fails; the others sleep and must be stopped within the grace period
timed_hvd --kill-grace 2 -np 3 bash -c "if [ \$HOROVOD_RANK = 0 ]; then sleep 0.3; exit 3; fi; exec -a sleep-$MARK sleep 300"
check "failure code 3" [ "$RC" -eq 3 ]
check "sleepers stopped within the grace period (${TOOK} ms)" [ "$TOOK" -lt 10000 ]
check "no sleeper left" wait_gone 2
check "summary counts stopped ranks" grep -q "stopped 2 other ranks" "$TMP/err"

# a worker that ignores SIGTERM is killed after --kill-grace
hvd --kill-grace 1 -np 2 bash -c "if [ \$HOROVOD_RANK = 0 ]; then sleep 0.3; exit 5; fi; trap '' TERM; (exec -a sleep-$MARK sleep 300); (exec -a sleep-$MARK sleep 300)"
check "stubborn worker: code 5" [ "$RC" -eq 5 ]
check "stubborn worker killed" wait_gone 2

# children of a worker are stopped too (process groups)
hvd --kill-grace 1 -np 2 bash -c "if [ \$HOROVOD_RANK = 0 ]; then sleep 0.3; exit 4; fi; (exec -a sleep-$MARK sleep 300) & wait"
check "grandchildren stopped" wait_gone 3

hvd -np 2 ./does-not-exist
check "missing command gives 127" [ "$RC" -eq 127 ]
check "missing command explained" grep -q "cannot run './does-not-exist': No such file or directory" "$TMP/err"
touch "$TMP/noexec"
hvd -np 1 "$TMP/noexec"
check "non-executable gives 126" [ "$RC" -eq 126 ]
finish
