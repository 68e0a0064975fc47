#!/usr/bin/env bash
# House rules that a compiler does not check: no banned calls (STYLE.md),
# no header reached by path, and every C file formatted by the
# repository's .clang-format.
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
# The layout is the architecture: a library's headers reach others only
# through its CMake target (PUBLIC include), never by path.
backdoors=$(git grep -nE 'include_directories\([^)]*\$\{PROJECT_SOURCE_DIR\}' -- '*CMakeLists.txt' 2>/dev/null
    git grep -nE '^\s*\$\{PROJECT_SOURCE_DIR\}/[a-z]+(/[a-z_]+)*\)?$' -- '*CMakeLists.txt' 2>/dev/null
    git grep -nE '#\s*include\s+"[^"]*\.\./' -- '*.c' '*.h' '*.cc' 2>/dev/null)
if [ -n "$backdoors" ]; then
    echo "headers reached by path instead of through a target:"
    echo "$backdoors"
    fail=1
else
    echo "ok - no header reached by path"
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
