/* SPDX-License-Identifier: BSD-3-Clause */
/* What test_config.c and test_config_errors.c share. */
#ifndef TEST_CONFIG_H
#define TEST_CONFIG_H

#include <stddef.h>

#include <xfer/config.h>

extern long checks;                /* the checks made, for unit_finish */
extern const char all_keys_yaml[]; /* a file that sets every key */

void write_text(const char *path, const char *text);
/* 1 when a and b are the same configuration, else 0 and the first difference in why */
int cfg_equal(const xfer_config_t *a, const xfer_config_t *b, char *why, size_t n);
/* text, written to the file name, must fail with exactly "<name>:<msg>" */
void expect_error(const char *name, const char *text, const char *msg);
xfer_config_t *load_ok(const char *path);
/* load -> print -> load -> print gives the same text and structs; 1 when it does not */
int round_trip(const char *path, const char *scratch);

void test_errors(void);
void test_every_error(void);
void test_cannot_open(void);
void test_shapes(void);
void test_algorithm_flags(void); /* test_config_algos.c */
void test_flow_keys(void);       /* test_config_flow.c */

#endif /* TEST_CONFIG_H */
