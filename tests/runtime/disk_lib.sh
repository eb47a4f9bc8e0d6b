# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the full-disk tests (full_disk_test.sh, end_marker_test.sh): their checks and a
# tmpfs of a given size, unmounted when the script exits (with its own cleanup_more, if any).
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
mounted=""
disk_cleanup() {
    if [ -n "$mounted" ]; then
        umount "$mounted" 2>/dev/null || umount -l "$mounted"
    fi
    if declare -F cleanup_more >/dev/null; then
        cleanup_more
    fi
}
trap disk_cleanup EXIT
# mount_tmpfs DIR SIZE: exit 77 (a skip for ctest) where mounting is not allowed
mount_tmpfs() {
    if ! mount -t tmpfs -o "size=$2" tmpfs "$1" 2>/dev/null; then
        echo "SKIP: cannot mount a tmpfs on $1 (not root, or mounts are not allowed)"
        exit 77
    fi
    mounted=$1
}
