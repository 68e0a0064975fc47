#!/usr/bin/env bash
# House rules that a compiler does not check: no banned calls (STYLE.md),
# and every C file formatted by the repository's .clang-format.
set -u
cd "${SRC:?set SRC to the source folder}"
fail=0
banned=$(git grep -nE '\b(strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|atoll|gets)\s*\(' -- '*.c' '*.h' 2>/dev/null)
if [ -n "$banned" ]; then
    echo "banned calls (use snprintf, strtok_r, strtol):"
    echo "$banned"
    fail=1
else
    echo "ok - no banned calls"
fi
if ! command -v clang-format >/dev/null; then
    echo "skip: clang-format not installed, formatting not checked"
    [ $fail -eq 0 ] && exit 77
    exit 1
fi
unformatted=$(for f in $(git ls-files '*.c' '*.h'); do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"
done)
if [ -n "$unformatted" ]; then
    echo "not formatted (run clang-format -i):"
    echo "$unformatted"
    fail=1
else
    echo "ok - every C file formatted"
fi
exit $fail
