/* Writing a trace log (doc/log-format.md). Used by the flusher (flusher.c). */
#ifndef PT_LOGWRITE_H
#define PT_LOGWRITE_H

#include <stdbool.h>
#include <stdint.h>
#include <trace.h>
#include "log_format.h" /* the format: offsets, block types, flags */

struct pt_shm;
struct pt_logw;


struct pt_logw_block {
    uint32_t type, payload_len, slot, pid;
    uint64_t thread, anchor_ticks;
    int64_t anchor_ns;
};

/* Log-side status (posix_trace_status_info's log fields). */
struct pt_logw_status {
    int log_full;        /* POSIX_TRACE_FULL / NOT_FULL */
    int log_overrun;     /* POSIX_TRACE_OVERRUN / NO_OVERRUN */
    int flush_error;     /* errno of the last failed write, 0 */
    int stopped;         /* UNTIL_FULL: the log filled and is closed to events */
    int closing;         /* shutdown: the flush under way is the log's last */
};


int  pt_logw_check_fd(int fd, int log_policy);
int  pt_logw_create(int fd, const struct pt_shm *s, struct pt_logw **out);
void pt_logw_destroy(struct pt_logw *w);
int  pt_logw_reset(struct pt_logw *w);
struct pt_logw_status *pt_logw_status(struct pt_logw *w);
uint32_t pt_logw_payload_max(const struct pt_logw *w);
uint64_t pt_logw_room(const struct pt_logw *w);
uint64_t pt_logw_names_blocks(const struct pt_logw *w, struct pt_shm *s);
bool pt_logw_batch_full(const struct pt_logw *w);
unsigned char *pt_logw_block(struct pt_logw *w, const struct pt_logw_block *b);
void pt_logw_seal(struct pt_logw *w);
void pt_logw_seal_len(struct pt_logw *w, uint32_t n);
int  pt_logw_commit(struct pt_logw *w);
void pt_logw_predict_wrap(struct pt_logw *w, uint32_t extra);
int  pt_logw_names(struct pt_logw *w, struct pt_shm *s);
int  pt_logw_status_block(struct pt_logw *w, const struct posix_trace_status_info *st,
                          uint64_t lost);
int  pt_logw_take_error(struct pt_logw *w);
void pt_logw_count_events(struct pt_logw *w, uint32_t n); /* n more in the open block */
uint64_t pt_logw_take_lost(struct pt_logw *w);
int  pt_logw_status_after_error(struct pt_logw *w, const struct posix_trace_status_info *st,
                                uint64_t lost);

#endif
