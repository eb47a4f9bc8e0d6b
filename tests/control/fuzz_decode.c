/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target of the control-message decoder, the first thing xferd runs on untrusted
 * input: decode, validate, the JSON form, and the round trip decode(encode(m)) == m (compared in
 * JSON form). Any crash, sanitizer report or round-trip difference aborts.
 * Built with clang -fsanitize=fuzzer,address,undefined by tests/control/tests.cmake. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/control.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xfer_ctl_msg_t *m = NULL, *back = NULL;
    xfer_status_t st, st2;
    void *buf = NULL;
    size_t len = 0;
    char *j1, *j2;

    st = xfer_ctl_decode(data, size, XFER_CTL_MAX_MSG, &m);
    if (!m) {
        if (st == XFER_SUCCESS)
            abort(); /* success without a message */
        return 0;
    }
    if (st != XFER_SUCCESS && st != XFER_ERR_PROTOCOL)
        abort(); /* only a foreign version hands a message over on failure */
    xfer_ctl_validate(m);
    j1 = xfer_ctl_to_json(m);
    if (!j1)
        abort();
    /* what was decoded can be encoded (a float32 grows to a float64: use the reply bound) */
    if (xfer_ctl_encode(m, XFER_CTL_MAX_REPLY, &buf, &len) != XFER_SUCCESS)
        abort();
    st2 = xfer_ctl_decode(buf, len, XFER_CTL_MAX_REPLY, &back);
    if (st2 != st || !back)
        abort();
    j2 = xfer_ctl_to_json(back);
    if (!j2 || strcmp(j1, j2) != 0) {
        fprintf(stderr, "round trip differs:\n %s\n %s\n", j1, j2 ? j2 : "(null)");
        abort();
    }
    free(j1);
    free(j2);
    free(buf);
    xfer_ctl_msg_free(&m);
    xfer_ctl_msg_free(&back);
    return 0;
}
