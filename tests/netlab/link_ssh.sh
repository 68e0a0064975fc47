#!/usr/bin/env bash
# An SSH link says when libssh2 holds input its socket no longer shows
# (link_ssh_check.c: a read of stderr takes stdout's data in, a write
# takes in the command's end), against one namespaced host's real sshd.
# Needs root.
. "$(dirname "$0")/../integration/lib.sh"
export LAB_UP_HOSTS=1
. "$(dirname "$0")/lab.sh"
LINK_SSH_CHECK=${LINK_SSH_CHECK:?set LINK_SSH_CHECK to link_ssh_check}

timeout -k 5 60 "$LINK_SSH_CHECK" "${ADDR[0]}" >"$TMP/checks" 2>"$TMP/err"
RC=$?
while read -r line; do
    case $line in
    "ok - "*) ok "${line#ok - }" ;;
    "not ok - "*) bad "${line#not ok - }" ;;
    esac
done <"$TMP/checks"
check "the checks ran to their end (exit 0)" [ "$RC" -eq 0 ]
[ "$RC" -eq 0 ] || sed 's/^/# /' "$TMP/err"
check "the host is left as it was" lab_clean_within 5
finish
