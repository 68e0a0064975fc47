#!/usr/bin/env bash
# cmake --install lays out binaries, man pages, the header, the library,
# a pkg-config file that builds a program against the installed library,
# and the Python package, which finds the installed library by itself;
# pip install from the tree gives the same package in a virtual env.
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

# --- Python: no COLLECTIVE_LIB, nothing from the source tree ---
PY=/usr/bin/python3
PRE=() X=()
if [ -n "${SANITIZE_PRELOAD:-}" ]; then
    PRE=(LD_PRELOAD="$SANITIZE_PRELOAD" ASAN_OPTIONS=detect_leaks=0)
    X=(-x "${PRE[0]}" -x "${PRE[1]}")
fi
WHERE='import collective, collective._lib as l; print("lib", l.find_library())'
TORCH_JOB='import collective.torch as hvd, torch; hvd.init(); t = hvd.allreduce(torch.ones(3) * hvd.rank(), op=hvd.Sum); print("torch sum", int(t[0]))'
libpath=$(find "$TMP/p" -name _libpath.py)
check "the Python package installed, with _libpath.py" [ -n "$libpath" ]
site=$(dirname "$(dirname "$libpath")")
cd "$TMP" || exit 1
env -u COLLECTIVE_LIB PYTHONPATH="$site" "${PRE[@]}" "$PY" -c "$WHERE" >"$TMP/where" 2>&1
check "installed package loads the installed library" grep -qx "lib $libdir/libcollective.so.0" "$TMP/where"
if "$PY" -c 'import torch' 2>/dev/null; then
    env -u COLLECTIVE_LIB LD_LIBRARY_PATH=$libdir PYTHONPATH="$site" \
        timeout -k 5 60 "$TMP/p/bin/hvdrun" "${X[@]}" -np 2 "$PY" -c "$TORCH_JOB" >"$TMP/out" 2>"$TMP/err"
    check "installed collective.torch: a 2-rank job" [ "$(grep -c 'stdout>:torch sum 1$' "$TMP/out")" -eq 2 ]
fi
if "$PY" -m venv --help >/dev/null 2>&1 && "$PY" -m pip --version >/dev/null 2>&1; then
    "$PY" -m venv --system-site-packages "$TMP/venv" >"$TMP/venv.log" 2>&1
    cp -r "$SRC/libcollective/python" "$TMP/pysrc" # pip builds in the tree
    COLLECTIVE_LIB=$libdir/libcollective.so "$TMP/venv/bin/python" -m pip \
        install --no-build-isolation --no-index "$TMP/pysrc" >"$TMP/pip.log" 2>&1
    check "pip install from the tree (no network)" [ $? -eq 0 ]
    [ -f "$TMP/venv/bin/python" ] || tail -5 "$TMP/pip.log" "$TMP/venv.log"
    env -u COLLECTIVE_LIB "${PRE[@]}" "$TMP/venv/bin/python" -c "$WHERE" >"$TMP/where" 2>&1
    check "pip-installed package loads its own copy of the library" \
        grep -q "^lib $TMP/venv/lib/python.*/collective/libcollective.so.0$" "$TMP/where"
    if "$PY" -c 'import torch' 2>/dev/null; then
        env -u COLLECTIVE_LIB timeout -k 5 60 "$TMP/p/bin/hvdrun" "${X[@]}" -np 2 \
            "$TMP/venv/bin/python" -c "$TORCH_JOB" >"$TMP/out" 2>"$TMP/err"
        check "pip-installed collective.torch: a 2-rank job" [ "$(grep -c 'stdout>:torch sum 1$' "$TMP/out")" -eq 2 ]
    fi
else
    echo "skip: pip install: $PY has no venv or pip (apt-get install python3-venv python3-pip)"
fi
finish
