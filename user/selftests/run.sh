# Runs inside the guest (faultline's /init or Linux's, under busybox sh):
# every test in /selftests/list, from its own directory, under a timeout,
# with its output and then one line `selftest DIR/PROGRAM [ARGS] exit N`.
# scripts/selftests.sh reads those lines.
bb=/bin/busybox
limit=${SELFTEST_TIMEOUT:-300}
filter=${SELFTEST_ONLY:-}
# exec's tests run scripts with #!/bin/bash.
[ -e /bin/bash ] || $bb ln -s busybox /bin/bash
while read -r test args; do
    case "$test" in ''|'#'*) continue ;; esac
    if [ -n "$filter" ] && ! echo "$test" | $bb grep -Eq "$filter"; then continue; fi
    name="$test${args:+ $args}"
    echo "selftest-start $name"
    cd "/selftests/$($bb dirname "$test")" || exit 1
    # shellcheck disable=SC2086 # the arguments are words
    $bb timeout "$limit" "./$($bb basename "$test")" $args </dev/null 2>&1
    echo "selftest $name exit $?"
done </selftests/list
