/* SPDX-License-Identifier: BSD-3-Clause */
/* Workflow tokens (docs/control-protocol.md, Security): reading one from a file only its owner
 * may access, and making a fresh one from getrandom(). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xfer/control.h>

#include "../core/core.h"

XFER_PUBLIC xfer_status_t xfer_ctl_read_token(const char *path, char **token)
{
    char buf[XFER_CTL_MAX_STR + 2];
    struct stat sb;
    size_t n = 0;
    int fd;

    if (!path || !token)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "path or token is NULL");
    *token = NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return XFER_ERR(XFER_ERR_DENIED, "%s: cannot open: %s", path, strerror(errno));
    /* fstat on the open file: what is checked is what is read */
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return XFER_ERR(XFER_ERR_DENIED, "%s: not a regular file", path);
    }
    if (sb.st_mode & (S_IRWXG | S_IRWXO)) {
        close(fd);
        return XFER_ERR(XFER_ERR_DENIED,
                        "%s: group or others have access (mode %04o); chmod 600 it", path,
                        (unsigned) (sb.st_mode & 07777));
    }
    while (n < sizeof(buf)) {
        ssize_t r = read(fd, buf + n, sizeof(buf) - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return XFER_ERR(XFER_ERR_DENIED, "%s: cannot read: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t) r;
    }
    close(fd);
    if (n > 0 && buf[n - 1] == '\n')
        n--;
    if (n == 0)
        return XFER_ERR(XFER_ERR_DENIED, "%s: the file is empty", path);
    if (n > XFER_CTL_MAX_STR)
        return XFER_ERR(XFER_ERR_DENIED, "%s: longer than %d bytes", path, XFER_CTL_MAX_STR);
    if (memchr(buf, '\0', n))
        return XFER_ERR(XFER_ERR_DENIED, "%s: holds a NUL byte", path);
    if (n < XFER_CTL_TOKEN_MIN)
        return XFER_ERR(XFER_ERR_DENIED, "%s: a token of %zu characters is too short (at least %d)",
                        path, n, XFER_CTL_TOKEN_MIN);
    *token = xfer_strndup(buf, n);
    if (!*token)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory for the token");
    return XFER_SUCCESS;
}

XFER_PUBLIC xfer_status_t xfer_ctl_make_token(char *out, size_t nbytes)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char rnd[64];

    if (!out || nbytes == 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "out is NULL or nbytes is 0");
    for (size_t done = 0; done < nbytes;) {
        size_t want = XFER_MIN(sizeof(rnd), nbytes - done);
        ssize_t r = getrandom(rnd, want, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return XFER_ERR(XFER_ERR_INTERNAL, "getrandom: %s", strerror(errno));
        for (ssize_t i = 0; i < r; i++) {
            out[2 * (done + (size_t) i)] = hex[rnd[i] >> 4];
            out[2 * (done + (size_t) i) + 1] = hex[rnd[i] & 0x0f];
        }
        done += (size_t) r;
    }
    out[2 * nbytes] = '\0';
    return XFER_SUCCESS;
}
