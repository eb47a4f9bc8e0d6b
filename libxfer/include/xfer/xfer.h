/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file xfer.h
 * @brief libxfer umbrella header: include this one.
 */
#ifndef XFER_XFER_H
#define XFER_XFER_H

#include <xfer/version.h>
#include <xfer/status.h>
#include <xfer/coll.h>
#include <xfer/sim.h>
#include <xfer/iso.h>
#include <xfer/config.h>
#include <xfer/workflow.h>

#endif /* XFER_XFER_H */
