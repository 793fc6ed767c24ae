/*
 * recstream.h — a recording written through a stdio stream, for the
 * writers that render into a FILE (profile --timeline): each line written
 * to it is a batch of recout (recout.h), so that the file is compressed by
 * its name in frames with a seek index, flushed within a second, whole at
 * every moment, as record's.
 */
#ifndef MIGMON_RECSTREAM_H
#define MIGMON_RECSTREAM_H

#include <stdint.h>
#include <stdio.h>

#include "app/recout.h"

/* A stream onto fd (taken: fclose closes it) writing a recording of kind
 * k whose lines come every interval_ns. fclose ends the recording (its
 * last frame and entry) and fails when any of it could not be written.
 * NULL with one line in err. */
FILE *recstream_open(int fd, enum rec_compress k, uint64_t interval_ns, char *err, size_t errlen);

#endif
