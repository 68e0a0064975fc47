#!/usr/bin/env bash
# cmake --install lays out binaries, man pages, the header, the library and
# a pkg-config file that builds a program against the installed library.
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:?set BUILD to the build folder}
SRC=${SRC:?set SRC to the source folder}

cmake --install "$BUILD" --prefix "$TMP/p" >"$TMP/install.log" 2>&1
check "cmake --install succeeds" [ $? -eq 0 ]
check "hvdrun installed" [ -x "$TMP/p/bin/hvdrun" ]
check "hvdrun.1 installed" [ -f "$TMP/p/share/man/man1/hvdrun.1" ]
check "hvdd installed" [ -x "$TMP/p/bin/hvdd" ]
check "hvdrun-agent and hvdrun-ssh installed beside hvdrun" [ -x "$TMP/p/bin/hvdrun-agent" -a -x "$TMP/p/bin/hvdrun-ssh" ]
check "collective.3 installed" [ -f "$TMP/p/share/man/man3/collective.3" ]
check "hvdd.8 installed" [ -f "$TMP/p/share/man/man8/hvdd.8" ]
check "hvdrun-hostfile.5 installed" [ -f "$TMP/p/share/man/man5/hvdrun-hostfile.5" ]
check "collective.h installed" [ -f "$TMP/p/include/collective.h" ]
pc=$(find "$TMP/p" -name collective.pc)
check "collective.pc installed" [ -n "$pc" ]
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs collective)
cc -o "$TMP/hello" "$SRC/examples/hello.c" $flags ${SANITIZE_FLAGS:-} 2>"$TMP/cc.log"
check "hello builds with pkg-config" [ $? -eq 0 ]
libdir=$(dirname "$(dirname "$pc")")
LD_LIBRARY_PATH=$libdir hvd -np 2 "$TMP/hello"
check "installed hvdrun runs it" grep -q "^\[1\]<stdout>:rank 1 of 2" "$TMP/out"
exported=$(nm -D --defined-only "$libdir"/libcollective.so | awk '$2 ~ /[TDB]/ {print $3}')
check "coll_init exported" grep -qx coll_init <<<"$exported"
check "nothing but coll_* exported" [ -z "$(grep -vE '^(coll_[a-z0-9_]+|_init|_fini)$' <<<"$exported")" ]
check "internal state hidden" [ -z "$(grep -x coll_init_detail <<<"$exported")" ]
finish
