/*
 * record.h — the record mode: a snapshot from the sampling engine written
 * every interval (or for every line read on stdin) as JSON Lines, CSV or
 * InfluxDB line protocol (docs/record.md).
 *
 * Each snapshot is rendered in memory and handed to the kernel with one
 * write, so a recorder that is killed leaves whole lines behind, and one
 * whose write fails part-way is cut back (outfile.h); SIGINT, SIGTERM,
 * SIGHUP, a closed pipe and the end of standard input (with --trigger
 * stdin, or when it is a pipe or socket) end it with status 0, except that
 * SIGHUP reopens -o FILE when that is a regular file, as does the path no
 * longer naming it.
 */
#ifndef MIGMON_RECORD_H
#define MIGMON_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "app/cli.h"
#include "core/snapshot.h"
#include "engine/collect.h"

/* SIGINT, SIGTERM and SIGHUP end the recording from now on (before the
 * collector opens, so one that comes while the driver loads is not lost). */
void record_catch_signals(void);

/* Opens c->output ("-": standard output). An existing regular file is
 * refused unless c->append or c->force, a symlink to anything but a stream
 * always; a character device, FIFO or socket is written to as it is. Returns the descriptor,
 * -1 with one line in err (the caller exits with status 2), or -2 when a
 * stop signal came while the open waited (a FIFO without a reader): the
 * recording ends before it began, status 0. *header: the
 * output is empty, so a CSV recording starts with its header. */
int record_open(const struct cli *c, bool *header, char *err, size_t errlen);

/* Records until a limit, a signal, a closed pipe or the end of standard
 * input (--trigger stdin; in interval mode when it is a pipe, FIFO or
 * socket, not /dev/null, a regular file or a terminal). Takes the
 * collector for the engine while it runs and closes fd (unless it is
 * standard output). Returns the exit status. */
int record_run(struct collector *col, const struct cli *c, int fd, bool header);

/* One snapshot in fmt (FMT_JSON and FMT_JSONL: one line; FMT_CSV: the
 * header first when header is set; FMT_INFLUX: one batch), with every
 * event it holds (JSON Lines and line protocol: a stream of one
 * snapshot, --once). */
void record_format(FILE *f, enum cli_format fmt, const struct snapshot *s, bool header);

#endif
