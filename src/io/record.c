/* One finished replica as bytes (record.h): the pack and unpack shared by the MPI
 * result messages and the checkpoint. */
#include "record.h"

#include <stdint.h>
#include <string.h>

/* Doubles before the values: warmup, cpu_seconds, sim_time, growth. */
#define LBMC_RECORD_SCALARS 4

size_t lbmc_record_size(size_t total, long batches, int with_batches)
{
  size_t doubles = LBMC_RECORD_SCALARS + total + (with_batches ? (size_t)batches * total : 0);
  return LBMC_RECORD_HEAD + doubles * sizeof(double);
}

size_t lbmc_record_pack(void *buf, long point, long replica, const lbmc_replica_result *rr,
                        size_t total, long batches)
{
  const int with_batches = rr->batch_values != NULL;
  int64_t head[5] = {point, replica, rr->status, rr->events, with_batches};
  double scalars[LBMC_RECORD_SCALARS] = {rr->warmup, rr->cpu_seconds, rr->sim_time, rr->growth};
  unsigned char *b = buf;
  memcpy(b, head, sizeof head);
  memcpy(b + sizeof head, scalars, sizeof scalars);
  b += sizeof head + sizeof scalars;
  memcpy(b, rr->values, sizeof(double) * total);
  if (with_batches)
    memcpy(b + sizeof(double) * total, rr->batch_values, sizeof(double) * total * (size_t)batches);
  return lbmc_record_size(total, batches, with_batches);
}

size_t lbmc_record_size_of(const void *buf, size_t total, long batches)
{
  int64_t head[5];
  memcpy(head, buf, sizeof head);
  if (head[4] != 0 && head[4] != 1) return 0;
  return lbmc_record_size(total, batches, (int)head[4]);
}

int lbmc_record_unpack(const void *buf, size_t len, size_t total, long batches, lbmc_record *rec)
{
  const unsigned char *b = buf;
  int64_t head[5];
  double scalars[LBMC_RECORD_SCALARS];
  if (len < LBMC_RECORD_HEAD || lbmc_record_size_of(buf, total, batches) != len) return -1;
  memcpy(head, b, sizeof head);
  memcpy(scalars, b + sizeof head, sizeof scalars);
  memset(rec, 0, sizeof *rec);
  rec->point = (long)head[0];
  rec->replica = (long)head[1];
  rec->rr.status = (lbmc_status)head[2];
  rec->rr.events = head[3];
  rec->rr.warmup = scalars[0];
  rec->rr.cpu_seconds = scalars[1];
  rec->rr.sim_time = scalars[2];
  rec->rr.growth = scalars[3];
  rec->rr.values = (double *)(b + sizeof head + sizeof scalars);
  rec->rr.batch_values = head[4] ? rec->rr.values + total : NULL;
  return 0;
}
