/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test-only LD_PRELOAD library: a file system that fills up, without privileges. Files under
 * XFER_TEST_FULL_DIR draw on one budget of XFER_TEST_FULL_BYTES bytes shared by every process of
 * the run (a table in the file XFER_TEST_FULL_COUNTER, at least 8 KiB of zeros, mapped shared).
 * As on a real disk, what takes space is a file's growth: a write or an fallocate that reaches
 * past what the file already holds (its size, or what fallocate reserved) takes the difference,
 * and one that does not fit in what is left fails whole with ENOSPC; rewriting, or writing into
 * reserved room, takes nothing; ftruncate to less gives the rest back, removing a file
 * does not. Covers the calls MPI-IO and
 * HDF5 write with (write, pwrite, writev, pwritev and their 64-bit names, pwritev2, fallocate,
 * posix_fallocate); stdio's own writes inside libc are not seen (small marker files stay
 * writable). Writes elsewhere pass through. The first refusal of each process is noted on
 * stderr ("full_disk: ..."). XFER_TEST_FULL_NO_FALLOCATE=1: the file system cannot reserve
 * (fallocate fails with EOPNOTSUPP, as on some network file systems), so the disk fills inside
 * the writes themselves.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define NFILES 160

typedef struct disk {
    uint64_t used;
    uint32_t lock, nfiles;
    struct {
        uint64_t dev, ino, held; /* bytes the file holds: its largest size or reservation */
    } f[NFILES];
} disk_t;

static char dir[PATH_MAX];
static size_t dirlen;
static uint64_t cap;
static disk_t *disk; /* shared by all processes; NULL: the shim is off */
static int noted, no_fallocate;

__attribute__((constructor)) static void setup(void)
{
    const char *d = getenv("XFER_TEST_FULL_DIR"), *b = getenv("XFER_TEST_FULL_BYTES"),
               *c = getenv("XFER_TEST_FULL_COUNTER");
    void *p;
    int fd;
    if (!d || !b || !c || !realpath(d, dir))
        return;
    dirlen = strlen(dir);
    cap = strtoull(b, NULL, 10);
    no_fallocate = getenv("XFER_TEST_FULL_NO_FALLOCATE") &&
                   strcmp(getenv("XFER_TEST_FULL_NO_FALLOCATE"), "1") == 0;
    if ((fd = open(c, O_RDWR)) < 0)
        return;
    p = mmap(NULL, sizeof(disk_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p != MAP_FAILED)
        disk = p;
}

/* Is @p fd a file under the directory? */
static int watched(int fd)
{
    char link[64], path[PATH_MAX];
    ssize_t n;
    if (!disk)
        return 0;
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof(path) - 1);
    if (n <= 0)
        return 0;
    path[n] = '\0';
    return strncmp(path, dir, dirlen) == 0 && (path[dirlen] == '/' || path[dirlen] == '\0');
}

static void note(uint64_t need, uint64_t used)
{
    char msg[160];
    int len;
    ssize_t (*real)(int, const void *, size_t) = dlsym(RTLD_NEXT, "write");
    if (noted)
        return;
    noted = 1;
    len = snprintf(msg, sizeof(msg),
                   "full_disk: pid %d: ENOSPC for %llu more bytes (%llu of %llu used)\n",
                   (int) getpid(), (unsigned long long) need, (unsigned long long) used,
                   (unsigned long long) cap);
    if (real && len > 0)
        (void) !real(2, msg, (size_t) len);
}

/* The file @p fd is to reach @p end bytes: 0 when the disk has room for its growth (taken), or
 * -1 with errno ENOSPC. */
static int grow(int fd, uint64_t end)
{
    struct stat sb;
    uint64_t held, need;
    uint32_t i;
    int rc = 0;
    if (!watched(fd) || fstat(fd, &sb) != 0)
        return 0;
    while (__atomic_exchange_n(&disk->lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
    for (i = 0; i < disk->nfiles; i++)
        if (disk->f[i].dev == (uint64_t) sb.st_dev && disk->f[i].ino == (uint64_t) sb.st_ino)
            break;
    if (i == disk->nfiles && i < NFILES) {
        disk->f[i].dev = (uint64_t) sb.st_dev;
        disk->f[i].ino = (uint64_t) sb.st_ino;
        disk->f[i].held = 0;
        disk->nfiles++;
    }
    held = (uint64_t) sb.st_size;
    if (i < NFILES && disk->f[i].held > held)
        held = disk->f[i].held;
    need = end > held ? end - held : 0;
    if (disk->used + need > cap) {
        note(need, disk->used);
        errno = ENOSPC;
        rc = -1;
    } else {
        disk->used += need;
        if (i < NFILES && end > disk->f[i].held)
            disk->f[i].held = end;
    }
    __atomic_store_n(&disk->lock, 0, __ATOMIC_RELEASE);
    return rc;
}

/* The file @p fd is cut to @p len bytes: what it held past that is free again. */
static void shrink(int fd, uint64_t len)
{
    struct stat sb;
    uint32_t i;
    if (!watched(fd) || fstat(fd, &sb) != 0)
        return;
    while (__atomic_exchange_n(&disk->lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
    for (i = 0; i < disk->nfiles; i++)
        if (disk->f[i].dev == (uint64_t) sb.st_dev && disk->f[i].ino == (uint64_t) sb.st_ino) {
            uint64_t held =
                disk->f[i].held > (uint64_t) sb.st_size ? disk->f[i].held : (uint64_t) sb.st_size;
            if (held > len) {
                disk->used -= held - len;
                disk->f[i].held = len;
            }
            break;
        }
    __atomic_store_n(&disk->lock, 0, __ATOMIC_RELEASE);
}

/* Where a write without an offset lands. */
static uint64_t here(int fd)
{
    const off_t o = lseek(fd, 0, SEEK_CUR);
    return o < 0 ? 0 : (uint64_t) o;
}

static uint64_t iov_bytes(const struct iovec *iov, int cnt)
{
    uint64_t n = 0;
    int i;
    for (i = 0; i < cnt; i++)
        n += iov[i].iov_len;
    return n;
}

#define REAL(name, type) ((type) dlsym(RTLD_NEXT, name))

ssize_t write(int fd, const void *buf, size_t n)
{
    if (n && grow(fd, here(fd) + n) != 0)
        return -1;
    return REAL("write", ssize_t(*)(int, const void *, size_t))(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (n && grow(fd, (uint64_t) off + n) != 0)
        return -1;
    return REAL("pwrite", ssize_t(*)(int, const void *, size_t, off_t))(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    if (n && grow(fd, (uint64_t) off + n) != 0)
        return -1;
    return REAL("pwrite64", ssize_t(*)(int, const void *, size_t, off_t))(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    const uint64_t n = iov_bytes(iov, cnt);
    if (n && grow(fd, here(fd) + n) != 0)
        return -1;
    return REAL("writev", ssize_t(*)(int, const struct iovec *, int))(fd, iov, cnt);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    const uint64_t n = iov_bytes(iov, cnt);
    if (n && grow(fd, (uint64_t) off + n) != 0)
        return -1;
    return REAL("pwritev", ssize_t(*)(int, const struct iovec *, int, off_t))(fd, iov, cnt, off);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
{
    const uint64_t n = iov_bytes(iov, cnt);
    if (n && grow(fd, (uint64_t) off + n) != 0)
        return -1;
    return REAL("pwritev64", ssize_t(*)(int, const struct iovec *, int, off_t))(fd, iov, cnt, off);
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    const uint64_t n = iov_bytes(iov, cnt);
    if (n && grow(fd, (off < 0 ? here(fd) : (uint64_t) off) + n) != 0)
        return -1;
    return REAL("pwritev2", ssize_t(*)(int, const struct iovec *, int, off_t, int))(fd, iov, cnt,
                                                                                    off, flags);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
    if (no_fallocate && watched(fd)) {
        errno = EOPNOTSUPP;
        return -1;
    }
    if (len > 0 && grow(fd, (uint64_t) off + (uint64_t) len) != 0)
        return -1;
    return REAL("fallocate", int (*)(int, int, off_t, off_t))(fd, mode, off, len);
}

int posix_fallocate(int fd, off_t off, off_t len)
{
    if (no_fallocate && watched(fd))
        return EOPNOTSUPP;
    if (len > 0 && grow(fd, (uint64_t) off + (uint64_t) len) != 0)
        return ENOSPC; /* posix_fallocate returns the error */
    return REAL("posix_fallocate", int (*)(int, off_t, off_t))(fd, off, len);
}

int ftruncate(int fd, off_t len)
{
    const int rc = REAL("ftruncate", int (*)(int, off_t))(fd, len);
    if (rc == 0 && len >= 0)
        shrink(fd, (uint64_t) len);
    return rc;
}

int ftruncate64(int fd, off_t len)
{
    const int rc = REAL("ftruncate64", int (*)(int, off_t))(fd, len);
    if (rc == 0 && len >= 0)
        shrink(fd, (uint64_t) len);
    return rc;
}
