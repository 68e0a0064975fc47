/* Worker output to the terminal: each line tagged "[rank]<stdout>:" or
 * "[rank]<stderr>:" (Horovod's tags), whole lines only, so lines of
 * different ranks never mix. A '\r' ends a segment too, so progress bars
 * keep redrawing in place. */
#ifndef HVD_OUTPUT_H
#define HVD_OUTPUT_H

#include <stddef.h>

/* Complete tagged lines waiting to be written to one of hvdrun's fds. */
typedef struct out_sink {
    int fd;
    char *buf;
    size_t len, cap;
    int broken; /* the reader went away: drop further output */
} out_sink;

/* One stream (stdout or stderr) of one rank. */
typedef struct out_stream {
    char tag[48]; /* "[3]<stderr>:" */
    char *line;   /* the unfinished line */
    size_t len, cap;
    int after_cr;    /* the last segment ended with '\r' */
    int file_fd;     /* --output-filename copy, or -1 */
    int timestamps;  /* --prefix-timestamp */
    char tail[2048]; /* the last bytes, for the failure summary */
    size_t tail_len;
} out_stream;

/* Writes all n bytes to fd, under one lock for the whole process: lines
 * that several threads write (an agent's calls to hvdd beside its
 * workers' output, relay.h) never mix. 0, or -1 when the fd broke. */
int out_write(int fd, const void *data, size_t n);

void out_sink_init(out_sink *s, int fd);
/* Buffers n bytes (written at once when memory runs out). */
void out_sink_add(out_sink *s, const char *p, size_t n);
/* Writes everything buffered; blocks while the reader is slow. */
void out_sink_flush(out_sink *s);
void out_sink_release(out_sink *s);

void out_stream_init(out_stream *s, int rank, int is_stderr, int timestamps,
                     int file_fd);
/* Adds bytes read from the worker; full lines go to sink. */
void out_stream_feed(out_stream *s, const char *data, size_t n, out_sink *sink);
/* At EOF: a partial last line is written with a newline added. */
void out_stream_finish(out_stream *s, out_sink *sink);
void out_stream_release(out_stream *s);

/* Copies up to `lines` of the stream's last lines into buf. */
void out_stream_last_lines(const out_stream *s, int lines, char *buf,
                           size_t size);

/* Tags the stream's next lines with another rank (an elastic round
 * renumbered its worker). */
void out_stream_retag(out_stream *s, int rank, int is_stderr);
/* Creates DIR/rank.<rank padded to the width of size-1>/ and opens its
 * `name` file for writing. Returns the fd or -1 with errno. */
int out_open_rank_file(const char *dir, int rank, int size, const char *name);

#endif
