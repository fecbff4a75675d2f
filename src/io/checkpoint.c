/* The checkpoint of a run (checkpoint.h): header, owner slot and lock, CRC-checked
 * records, replay that resynchronises after damage. */
#include "checkpoint.h"

#include "../sim/record.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "h5file.h"

#define LBMC_CKPT_MAGIC "LBMCCKP5"
#define LBMC_CKPT_OWNER 120 /* bytes of the owner slot, after the magic */
#define LBMC_CKPT_HEAD  (8 + LBMC_CKPT_OWNER)
/* A job text longer than this in a header is damage (job files are capped at 16 MiB). */
#define LBMC_CKPT_MAX_TEXT ((uint64_t)1 << 24)

struct lbmc_checkpoint_ {
  int fd;     /* open read-write; flock'ed when locked */
  int locked; /* 0: the file system has no locks */
  char *path;
  size_t total;
  long batches;
  long shard[2]; /* the run's shard i/k; 0/0: the whole job */
  off_t end;     /* where the next record goes */
  /* The owner slot as --resume found it (before taking it): a damaged file is kept aside
   * byte for byte as found. */
  char found_owner[LBMC_CKPT_OWNER];
  int has_found_owner;
};

/* ---- reading and writing whole buffers ---- */

static int lbmc_ckpt_pwrite(int fd, const void *buf, size_t len, off_t at)
{
  const unsigned char *p = buf;
  while (len > 0) {
    ssize_t n = pwrite(fd, p, len, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n, len -= (size_t)n, at += n;
  }
  return 0;
}

static uint32_t lbmc_ckpt_crc(const void *p, size_t len)
{
  uLong crc = crc32(0L, Z_NULL, 0);
  const unsigned char *b = p;
  while (len > 0) { /* zlib takes uInt lengths */
    uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
    crc = crc32(crc, b, n);
    b += n, len -= n;
  }
  return (uint32_t)crc;
}

/* ---- the owner slot ---- */

static void lbmc_ckpt_owner_text(char slot[LBMC_CKPT_OWNER])
{
  char host[64] = "unknown", since[32];
  time_t now = time(NULL);
  struct tm tm;
  gethostname(host, sizeof host - 1);
  gmtime_r(&now, &tm);
  strftime(since, sizeof since, "%Y-%m-%dT%H:%M:%SZ", &tm);
  memset(slot, 0, LBMC_CKPT_OWNER);
  snprintf(slot, LBMC_CKPT_OWNER, "pid=%ld host=%s since=%s", (long)getpid(), host, since);
}

/* The owner slot of the file (format 4) into out ("" if empty or unreadable). */
static void lbmc_ckpt_owner_read(int fd, char *out, size_t len)
{
  char slot[LBMC_CKPT_OWNER + 1] = {0};
  if (pread(fd, slot, LBMC_CKPT_OWNER, 8) != LBMC_CKPT_OWNER) slot[0] = '\0';
  slot[LBMC_CKPT_OWNER] = '\0';
  for (char *c = slot; *c; c++)
    if ((unsigned char)*c < 32 || (unsigned char)*c > 126) *c = '?'; /* damage shows as ? */
  snprintf(out, len, "%s", slot);
}

/* The PID and host an owner slot names (pid 0 if none). */
static long lbmc_ckpt_owner_pid(const char *owner, char *host, size_t len)
{
  long pid = 0;
  const char *h = strstr(owner, "host=");
  if (sscanf(owner, "pid=%ld", &pid) != 1) pid = 0;
  snprintf(host, len, "%.*s", h ? (int)strcspn(h + 5, " ") : 0, h ? h + 5 : "");
  return pid;
}

/* "PID p on host h, since t" of an owner slot. */
static const char *lbmc_ckpt_owner_words(const char *owner, char *buf, size_t len)
{
  char host[80];
  const char *since = strstr(owner, "since=");
  long pid = lbmc_ckpt_owner_pid(owner, host, sizeof host);
  if (!pid) {
    snprintf(buf, len, "another process (it has not recorded its PID and host yet)");
    return buf;
  }
  snprintf(buf, len, "PID %ld on host %s%s%s", pid, host, since ? ", since " : "",
           since ? since + 6 : "");
  return buf;
}

/* 1 if an owner slot names a process that runs on this host (and is not this one). */
static int lbmc_ckpt_owner_alive(const char *owner)
{
  char host[80], mine[64] = "";
  long pid = lbmc_ckpt_owner_pid(owner, host, sizeof host);
  gethostname(mine, sizeof mine - 1);
  if (pid <= 0 || pid == (long)getpid() || strcmp(host, mine) != 0) return 0;
  return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* ---- the lock ---- */

/* Lock fd (the checkpoint at path) for this run: 0 locked (ck->locked = 1) or no locks
 * on this file system (a warning; ck->locked = 0); an error when a live run holds it. */
static lbmc_err lbmc_ckpt_lock(int fd, const char *path, int *locked)
{
  char owner[LBMC_CKPT_OWNER + 1], words[256];
  int e;
  *locked = 0;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
    *locked = 1;
    return LBMC_SUCCESS;
  }
  e = errno;
  lbmc_ckpt_owner_read(fd, owner, sizeof owner);
  if (e == EWOULDBLOCK || e == EAGAIN || e == EACCES)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s is in use: a running lbmc run (%s) is writing this output; wait for it "
                      "to finish, or stop it (SIGUSR1 or SIGTERM: it keeps its checkpoint) and "
                      "continue with --resume",
                      path, lbmc_ckpt_owner_words(owner, words, sizeof words));
  if (lbmc_ckpt_owner_alive(owner))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s is in use: by its record, a running lbmc run (%s) is writing this "
                      "output (the file system has no locks to tell for sure: %s); wait for it "
                      "to finish, or stop it and continue with --resume",
                      path, lbmc_ckpt_owner_words(owner, words, sizeof words), strerror(e));
  fprintf(stderr,
          "lbmc run: warning: cannot lock %s (%s: the file system has no file locks); only a "
          "second lbmc run of this output on this host can be stopped (by the PID this run "
          "records in it): do not start one elsewhere\n",
          path, strerror(e));
  return LBMC_SUCCESS;
}

/* ---- the header ---- */

/* What the start of an existing file is. */
typedef enum {
  LBMC_CKPT_GOOD,       /* a whole header of a readable format (3, 4 or 5) */
  LBMC_CKPT_INCOMPLETE, /* the start of a header, never fully written */
  LBMC_CKPT_DAMAGED,    /* a header that fails its checksum, or cannot be one */
  LBMC_CKPT_OTHER,      /* the header of another format ("LBMCCKP<v>") */
  LBMC_CKPT_FOREIGN     /* not a checkpoint */
} lbmc_ckpt_kind;

typedef struct {
  lbmc_ckpt_kind kind;
  char format;      /* its magic's digit */
  const char *text; /* the job text, in the mapping; len bytes */
  uint64_t len;
  int64_t h[5]; /* seed, total, batches, shard i, shard k (format 5; older: -1, -1) */
  size_t end;   /* the first record's offset */
} lbmc_ckpt_header;

static int lbmc_ckpt_any_record(const unsigned char *m, size_t size, size_t from);

/* Parse the header of the mapped file m (size bytes). */
static void lbmc_ckpt_parse_header(const unsigned char *m, size_t size, lbmc_ckpt_header *hd)
{
  size_t at, nh;
  memset(hd, 0, sizeof *hd);
  if (size < 8) {
    hd->kind = size == 0 || memcmp(m, LBMC_CKPT_MAGIC, size) == 0 ? LBMC_CKPT_INCOMPLETE
                                                                  : LBMC_CKPT_FOREIGN;
    return;
  }
  hd->format = (char)m[7];
  if (memcmp(m, LBMC_CKPT_MAGIC, 7) != 0) {
    hd->kind = LBMC_CKPT_FOREIGN;
    return;
  }
  if (hd->format != '3' && hd->format != '4' && hd->format != '5') {
    hd->kind = LBMC_CKPT_OTHER;
    return;
  }
  at = hd->format >= '4' ? LBMC_CKPT_HEAD : 8;
  if (size < at + 8) { /* cut short, unless records follow (a header cannot be that short) */
    hd->kind = lbmc_ckpt_any_record(m, size, 8) ? LBMC_CKPT_DAMAGED : LBMC_CKPT_INCOMPLETE;
    return;
  }
  memcpy(&hd->len, m + at, 8);
  if (hd->len > LBMC_CKPT_MAX_TEXT) {
    hd->kind = LBMC_CKPT_DAMAGED;
    return;
  }
  hd->text = (const char *)m + at + 8;
  nh = hd->format == '5' ? 5 : 3;
  hd->end = at + 8 + (size_t)hd->len + 8 * nh + (hd->format >= '4' ? 4 : 0);
  if (hd->end > size) {
    hd->kind = lbmc_ckpt_any_record(m, size, at) ? LBMC_CKPT_DAMAGED : LBMC_CKPT_INCOMPLETE;
    return;
  }
  hd->h[3] = hd->h[4] = -1; /* the shard: unknown before format 5 */
  memcpy(hd->h, m + at + 8 + hd->len, 8 * nh);
  hd->kind = LBMC_CKPT_GOOD;
  if (hd->format >= '4') {
    uint32_t crc;
    memcpy(&crc, m + hd->end - 4, 4);
    if (crc != lbmc_ckpt_crc(m + at, hd->end - 4 - at)) hd->kind = LBMC_CKPT_DAMAGED;
  }
}

/* The header (format 5) of ck's run of a job: magic, owner slot, text, seed, total,
 * batches, shard, CRC, into a new buffer (*len bytes). */
static unsigned char *lbmc_ckpt_make_header(const lbmc_checkpoint *ck, const lbmc_job *job,
                                            size_t *len)
{
  const char *text = lbmc_job_text(job);
  const uint64_t tlen = strlen(text);
  const int64_t h[5] = {lbmc_job_seed(job), (int64_t)ck->total, ck->batches, ck->shard[0],
                        ck->shard[1]};
  unsigned char *b;
  uint32_t crc;
  *len = LBMC_CKPT_HEAD + 8 + (size_t)tlen + sizeof h + 4;
  if (!(b = malloc(*len))) return NULL;
  memcpy(b, LBMC_CKPT_MAGIC, 8);
  lbmc_ckpt_owner_text((char *)b + 8);
  memcpy(b + LBMC_CKPT_HEAD, &tlen, 8);
  memcpy(b + LBMC_CKPT_HEAD + 8, text, (size_t)tlen);
  memcpy(b + LBMC_CKPT_HEAD + 8 + tlen, h, sizeof h);
  crc = lbmc_ckpt_crc(b + LBMC_CKPT_HEAD, *len - 4 - LBMC_CKPT_HEAD);
  memcpy(b + *len - 4, &crc, 4);
  return b;
}

/* ---- records ---- */

/* The size of the valid record (with its CRC after it) at offset off of m, or 0. A
 * record is valid when its size fits the file, its version is this one's, its CRC
 * holds and its parts fit its size (lbmc_record_view, on an aligned copy in *buf). */
static size_t lbmc_ckpt_record_at(const unsigned char *m, size_t size, size_t off,
                                  unsigned char **buf, size_t *cap)
{
  size_t rs;
  int64_t version;
  uint32_t crc;
  lbmc_record rec;
  if (off > size || size - off < 2 * sizeof(int64_t) + 4) return 0;
  rs = lbmc_record_size_of(m + off);
  if (!rs || rs > size - off - 4) return 0;
  memcpy(&version, m + off + 8, sizeof version);
  if (version != LBMC_RECORD_VERSION) return 0;
  memcpy(&crc, m + off + rs, 4);
  if (crc != lbmc_ckpt_crc(m + off, rs)) return 0;
  if (rs > *cap) {
    unsigned char *b = realloc(*buf, rs);
    if (!b) return 0;
    *buf = b, *cap = rs;
  }
  memcpy(*buf, m + off, rs);
  return lbmc_record_view(*buf, rs, &rec) == 0 ? rs : 0;
}

/* 1 if a valid record starts anywhere in m from offset `from`. */
static int lbmc_ckpt_any_record(const unsigned char *m, size_t size, size_t from)
{
  unsigned char *buf = NULL;
  size_t cap = 0;
  int found = 0;
  for (size_t q = from; q < size && !found; q++)
    found = lbmc_ckpt_record_at(m, size, q, &buf, &cap) > 0;
  free(buf);
  return found;
}

/* 1 if the bytes at off (no valid record follows them) are a record cut short: fewer
 * than a record's head, or a plausible head whose record runs past the end. */
static int lbmc_ckpt_torn(const unsigned char *m, size_t size, size_t off)
{
  size_t rs;
  int64_t version;
  if (size - off < 2 * sizeof(int64_t)) return 1;
  rs = lbmc_record_size_of(m + off);
  memcpy(&version, m + off + 8, sizeof version);
  return rs && version == LBMC_RECORD_VERSION && rs + 4 > size - off;
}

/* A run of good records kept (offset, bytes with their CRCs). */
typedef struct {
  size_t off, len;
} lbmc_ckpt_span;

/* What a scan of the records found. */
typedef struct {
  long records;          /* valid records */
  size_t good_bytes;     /* their bytes with their CRCs */
  long stretches;        /* damaged stretches skipped */
  size_t damaged_bytes;  /* their bytes */
  size_t first_damage;   /* offset of the first */
  size_t torn_bytes;     /* a last record cut short */
  size_t end;            /* end of the last valid record */
  lbmc_ckpt_span *spans; /* the good records as runs (with keep_spans) */
  size_t nspans, capspans;
} lbmc_ckpt_scan;

/* About how many records the damaged stretches held (at least one each). */
static long lbmc_ckpt_damaged_records(const lbmc_ckpt_scan *sc)
{
  const double mean = sc->records ? (double)sc->good_bytes / (double)sc->records : 0;
  long n = mean > 0 ? (long)((double)sc->damaged_bytes / mean + 0.5) : 0;
  return n > sc->stretches ? n : sc->stretches;
}

static int lbmc_ckpt_keep(lbmc_ckpt_scan *sc, size_t off, size_t len)
{
  if (sc->nspans && sc->spans[sc->nspans - 1].off + sc->spans[sc->nspans - 1].len == off) {
    sc->spans[sc->nspans - 1].len += len;
    return 0;
  }
  if (sc->nspans == sc->capspans) {
    size_t cap = sc->capspans ? 2 * sc->capspans : 8;
    lbmc_ckpt_span *more = realloc(sc->spans, cap * sizeof *more);
    if (!more) return -1;
    sc->spans = more, sc->capspans = cap;
  }
  sc->spans[sc->nspans++] = (lbmc_ckpt_span){off, len};
  return 0;
}

/* Every valid record of m from offset start, in order, to good() (an aligned copy of
 * its bytes); damaged stretches are skipped by resynchronising on the next valid
 * record. Errors: what good() returns, LBMC_ERR_MEMORY. */
static lbmc_err lbmc_ckpt_scan_records(const unsigned char *m, size_t size, size_t start,
                                       lbmc_err (*good)(const unsigned char *, size_t, void *),
                                       void *ctx, lbmc_ckpt_scan *sc)
{
  unsigned char *buf = NULL;
  size_t cap = 0, off = start;
  lbmc_err err = LBMC_SUCCESS;
  sc->end = start;
  while (off < size && !err) {
    size_t rs = lbmc_ckpt_record_at(m, size, off, &buf, &cap), q;
    if (rs) {
      if (good) err = good(buf, rs, ctx);
      if (!err && lbmc_ckpt_keep(sc, off, rs + 4))
        err = LBMC_ERROR(LBMC_ERR_MEMORY, "checkpoint: out of memory");
      sc->records++, sc->good_bytes += rs + 4;
      off += rs + 4;
      sc->end = off;
      continue;
    }
    for (q = off + 1; q < size && !lbmc_ckpt_record_at(m, size, q, &buf, &cap); q++)
      ;
    if (q >= size && lbmc_ckpt_torn(m, size, off)) {
      sc->torn_bytes = size - off;
      break;
    }
    if (!sc->stretches) sc->first_damage = off;
    sc->stretches++, sc->damaged_bytes += q - off;
    off = q;
  }
  free(buf);
  return err;
}

/* ---- a mapped file ---- */

typedef struct {
  unsigned char *m;
  size_t size;
} lbmc_ckpt_map;

static int lbmc_ckpt_map_fd(int fd, lbmc_ckpt_map *map)
{
  struct stat st;
  map->m = NULL;
  map->size = 0;
  if (fstat(fd, &st) != 0) return -1;
  map->size = (size_t)st.st_size;
  if (!map->size) return 0;
  map->m = mmap(NULL, map->size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map->m == MAP_FAILED) {
    map->m = NULL;
    return -1;
  }
  return 0;
}

static void lbmc_ckpt_unmap(lbmc_ckpt_map *map)
{
  if (map->m) munmap(map->m, map->size);
  map->m = NULL;
}

/* ---- opening ---- */

static lbmc_err lbmc_ckpt_write_header(lbmc_checkpoint *ck, const lbmc_job *job)
{
  size_t len;
  unsigned char *h = lbmc_ckpt_make_header(ck, job, &len);
  int rc = h ? lbmc_ckpt_pwrite(ck->fd, h, len, 0) : -1;
  free(h);
  if (rc || ftruncate(ck->fd, (off_t)len) != 0 || fsync(ck->fd) != 0)
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot write the checkpoint %s: %s", ck->path,
                      h ? strerror(errno) : "out of memory");
  lbmc_fsync_dir(ck->path);
  ck->end = (off_t)len;
  return LBMC_SUCCESS;
}

/* The header of an existing checkpoint against the run's job: the same parsed settings
 * and seed (a damaged header of format 4 fails its CRC; format 3 has none, so damage
 * shows as another job). */
static lbmc_err lbmc_ckpt_check_header(const lbmc_checkpoint *ck, const lbmc_ckpt_header *hd,
                                       const lbmc_job *job)
{
  const char *text = lbmc_job_text(job);
  char *mine = NULL;
  lbmc_job *theirs = NULL;
  lbmc_job_difference d;
  int differ = 0;
  if (hd->len != strlen(text) || memcmp(hd->text, text, (size_t)hd->len) != 0) {
    if (!(mine = malloc((size_t)hd->len + 1)))
      return LBMC_ERROR(LBMC_ERR_MEMORY, "checkpoint: out of memory");
    memcpy(mine, hd->text, (size_t)hd->len);
    mine[hd->len] = '\0';
    if (lbmc_job_parse_text(mine, ck->path, &theirs) != LBMC_SUCCESS) {
      free(mine);
      return LBMC_ERROR(LBMC_ERR_FILE,
                        "%s: the job text in its header is not a valid job (%s); it cannot be "
                        "resumed: delete it (or move it aside) to start afresh",
                        ck->path,
                        hd->format == '3' ? "damaged, or written by another version of lbmc"
                                          : "written by another version of lbmc");
    }
    free(mine);
    differ = lbmc_job_compare(theirs, job, &d);
    lbmc_job_destroy(&theirs);
  }
  if (!differ && hd->h[0] != lbmc_job_seed(job)) {
    differ = 1;
    snprintf(d.key, sizeof d.key, "run.seed");
    snprintf(d.a, sizeof d.a, "%lld", (long long)hd->h[0]);
    snprintf(d.b, sizeof d.b, "%ld", lbmc_job_seed(job));
  }
  if (differ)
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "%s belongs to a different job: %s is %s there and %s in %s%s; run the job "
                      "it was made for, or delete it to start afresh",
                      ck->path, d.key, d.a, d.b, lbmc_job_name(job),
                      hd->format == '3' ? " (or its header, which has no checksum, is damaged)"
                                        : "");
  if (hd->h[1] != (int64_t)ck->total || hd->h[2] != ck->batches)
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "%s was written by another version of lbmc (its records hold %lld metric "
                      "entries and %lld batches, this one's %zu and %ld); delete it to start "
                      "afresh",
                      ck->path, (long long)hd->h[1], (long long)hd->h[2], ck->total, ck->batches);
  if (hd->h[4] >= 0 && (hd->h[3] != ck->shard[0] || hd->h[4] != ck->shard[1])) {
    char was[48] = "the whole job", is[48] = "the whole job";
    if (hd->h[4] > 0)
      snprintf(was, sizeof was, "shard %lld/%lld", (long long)hd->h[3], (long long)hd->h[4]);
    if (ck->shard[1] > 0) snprintf(is, sizeof is, "shard %ld/%ld", ck->shard[0], ck->shard[1]);
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "%s belongs to %s of %s, and this run is %s; allowed: the same shard "
                      "(resume with the --shard it was started with)",
                      ck->path, was, lbmc_job_name(job), is);
  }
  return LBMC_SUCCESS;
}

/* A free name for the damaged file kept aside: PATH.damaged, PATH.damaged.2, ... */
static void lbmc_ckpt_aside_name(const char *path, char *out, size_t len)
{
  snprintf(out, len, "%s.damaged", path);
  for (int k = 2; access(out, F_OK) == 0 && k < 1000; k++)
    snprintf(out, len, "%s.damaged.%d", path, k);
}

/* Keep the file at path (mapped in map) as `aside`: a hard link, or else a copy. */
static int lbmc_ckpt_keep_aside(const char *path, const lbmc_ckpt_map *map, const char *aside)
{
  int fd, rc;
  if (link(path, aside) == 0) return 0;
  fd = open(aside, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return -1;
  rc = lbmc_ckpt_pwrite(fd, map->m, map->size, 0) || fsync(fd) != 0;
  close(fd);
  if (rc) unlink(aside);
  return rc ? -1 : 0;
}

/* Write a new checkpoint with the job's header and the good records of sc (from map),
 * locked, and put it in place of the old one (kept aside as `aside` when not NULL): the
 * file at ck->path stays whole and locked at every moment. */
static lbmc_err lbmc_ckpt_rewrite(lbmc_checkpoint *ck, const lbmc_job *job,
                                  const lbmc_ckpt_map *map, const lbmc_ckpt_scan *sc,
                                  const char *aside)
{
  char tmp[4200];
  size_t len;
  unsigned char *h = lbmc_ckpt_make_header(ck, job, &len);
  off_t at = (off_t)len;
  int fd, rc = !h, e = 0, locked = 0;
  snprintf(tmp, sizeof tmp, "%s.new.%ld", ck->path, (long)getpid());
  fd = rc ? -1 : open(tmp, O_RDWR | O_CREAT | O_EXCL, 0644);
  if (fd < 0) rc = 1;
  if (!rc) locked = flock(fd, LOCK_EX | LOCK_NB) == 0;
  if (!rc) rc = lbmc_ckpt_pwrite(fd, h, len, 0);
  for (size_t i = 0; !rc && i < sc->nspans; i++) {
    rc = lbmc_ckpt_pwrite(fd, map->m + sc->spans[i].off, sc->spans[i].len, at);
    at += (off_t)sc->spans[i].len;
  }
  if (!rc) rc = fsync(fd) != 0;
  if (!rc && aside && ck->has_found_owner) /* the damaged file as found, not taken over */
    rc = lbmc_ckpt_pwrite(ck->fd, ck->found_owner, sizeof ck->found_owner, 8);
  if (!rc && aside) rc = lbmc_ckpt_keep_aside(ck->path, map, aside);
  if (!rc) rc = rename(tmp, ck->path) != 0;
  if (rc) e = errno;
  free(h);
  if (rc) {
    if (fd >= 0) close(fd);
    unlink(tmp);
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot rewrite the checkpoint %s without its damage: %s",
                      ck->path, e ? strerror(e) : "out of memory");
  }
  lbmc_fsync_dir(ck->path);
  close(ck->fd); /* the old file: its lock goes with it */
  ck->fd = fd;
  ck->locked = locked;
  ck->end = at;
  return LBMC_SUCCESS;
}

typedef struct {
  lbmc_err (*visit)(const void *, size_t, void *);
  void *ctx;
} lbmc_ckpt_visit;

static lbmc_err lbmc_ckpt_visit_one(const unsigned char *rec, size_t size, void *ctx)
{
  lbmc_ckpt_visit *v = ctx;
  return v->visit ? v->visit(rec, size, v->ctx) : LBMC_SUCCESS;
}

/* --resume: replay the records of a checkpoint with a good header (mapped in map),
 * skipping damage; then continue after the last good record, in place, or in a
 * rewritten file (damage: the old one kept aside; format 3: converted). */
static lbmc_err lbmc_ckpt_replay(lbmc_checkpoint *ck, const lbmc_job *job, const lbmc_ckpt_map *map,
                                 const lbmc_ckpt_header *hd,
                                 lbmc_err (*visit)(const void *, size_t, void *), void *ctx)
{
  lbmc_ckpt_visit v = {visit, ctx};
  lbmc_ckpt_scan sc;
  lbmc_err err;
  char aside[4300];
  memset(&sc, 0, sizeof sc);
  err = lbmc_ckpt_scan_records(map->m, map->size, hd->end, lbmc_ckpt_visit_one, &v, &sc);
  if (!err && sc.stretches) {
    lbmc_ckpt_aside_name(ck->path, aside, sizeof aside);
    err = lbmc_ckpt_rewrite(ck, job, map, &sc, aside);
    if (!err)
      fprintf(stderr,
              "lbmc run: note: %s was damaged: skipped %ld damaged stretch%s of %zu bytes in "
              "all (about %ld replica record%s, the first at byte %zu) and kept the %ld good "
              "records before and after; the replicas lost are simulated again; the damaged "
              "file is kept as %s\n",
              ck->path, sc.stretches, sc.stretches == 1 ? "" : "es", sc.damaged_bytes,
              lbmc_ckpt_damaged_records(&sc), lbmc_ckpt_damaged_records(&sc) == 1 ? "" : "s",
              sc.first_damage, sc.records, aside);
  } else if (!err && hd->format != LBMC_CKPT_MAGIC[7]) {
    err = lbmc_ckpt_rewrite(ck, job, map, &sc, NULL); /* into this format: owner slot, CRC */
  } else if (!err) {
    if (sc.torn_bytes && ftruncate(ck->fd, (off_t)sc.end) != 0)
      err = LBMC_ERROR(LBMC_ERR_FILE, "cannot cut the incomplete last record of %s: %s", ck->path,
                       strerror(errno));
    ck->end = (off_t)sc.end;
  }
  if (!err && sc.torn_bytes)
    fprintf(stderr,
            "lbmc run: note: %s ended in a record cut short (%zu bytes: the run was stopped "
            "while writing it); dropped it\n",
            ck->path, sc.torn_bytes);
  free(sc.spans);
  return err;
}

/* Open (or create) the file, lock it, and read the start of an existing one. */
static lbmc_err lbmc_ckpt_open_file(lbmc_checkpoint *ck, int *created)
{
  ck->fd = open(ck->path, O_RDWR | O_CREAT | O_EXCL, 0644);
  *created = ck->fd >= 0;
  if (ck->fd < 0 && errno == EEXIST) ck->fd = open(ck->path, O_RDWR);
  if (ck->fd < 0)
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot %s the checkpoint %s: %s",
                      *created ? "create" : "open", ck->path, strerror(errno));
  return lbmc_ckpt_lock(ck->fd, ck->path, &ck->locked);
}

/* An existing checkpoint (locked by this run): replaced when it holds nothing usable
 * (incomplete, another format without --resume), refused when it cannot be resumed,
 * replayed with --resume. *fresh = 1 to write a new header. */
static lbmc_err lbmc_ckpt_existing(lbmc_checkpoint *ck, int resume, const lbmc_job *job,
                                   lbmc_err (*visit)(const void *, size_t, void *), void *ctx,
                                   int *fresh)
{
  lbmc_ckpt_map map;
  lbmc_ckpt_header hd;
  char owner[LBMC_CKPT_OWNER + 1] = "", words[256];
  lbmc_err err = LBMC_SUCCESS;
  *fresh = 0;
  if (lbmc_ckpt_map_fd(ck->fd, &map))
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot read the checkpoint %s: %s", ck->path,
                      strerror(errno));
  lbmc_ckpt_parse_header(map.m, map.size, &hd);
  if (hd.kind == LBMC_CKPT_GOOD && hd.format >= '4')
    lbmc_ckpt_owner_read(ck->fd, owner, sizeof owner);
  if (owner[0] && hd.kind == LBMC_CKPT_GOOD && resume)
    fprintf(stderr,
            "lbmc run: note: %s was left by a run that stopped without closing it (%s; killed, "
            "or its machine failed); taking it over\n",
            ck->path, lbmc_ckpt_owner_words(owner, words, sizeof words));
  if (hd.kind == LBMC_CKPT_GOOD && hd.format >= '4' && resume) { /* ours from now on */
    char slot[LBMC_CKPT_OWNER];
    lbmc_ckpt_owner_text(slot);
    ck->has_found_owner =
        pread(ck->fd, ck->found_owner, sizeof ck->found_owner, 8) == LBMC_CKPT_OWNER;
    if (lbmc_ckpt_pwrite(ck->fd, slot, sizeof slot, 8)) {
      lbmc_ckpt_unmap(&map);
      return LBMC_ERROR(LBMC_ERR_FILE, "cannot write to the checkpoint %s: %s", ck->path,
                        strerror(errno));
    }
  }
  if (hd.kind == LBMC_CKPT_INCOMPLETE) {
    fprintf(stderr,
            "lbmc run: note: %s is incomplete: its header was never fully written (the run "
            "that made it stopped as it started), so it holds no replicas; starting afresh\n",
            ck->path);
    *fresh = 1;
  } else if (hd.kind == LBMC_CKPT_OTHER && resume) {
    err = LBMC_ERROR(LBMC_ERR_MISMATCH,
                     "%s was written by another version of lbmc (checkpoint format %c, this one "
                     "reads formats 3 to %c) and cannot be resumed: rerun without --resume to "
                     "start afresh (it is replaced), or delete it",
                     ck->path, hd.format, LBMC_CKPT_MAGIC[7]);
  } else if (hd.kind == LBMC_CKPT_OTHER) {
    fprintf(stderr,
            "lbmc run: note: %s was written by another version of lbmc (checkpoint format %c); "
            "starting afresh and replacing it\n",
            ck->path, hd.format);
    *fresh = 1;
  } else if (hd.kind == LBMC_CKPT_FOREIGN) {
    err = LBMC_ERROR(LBMC_ERR_FILE,
                     "%s is not an lbmc checkpoint, or its first bytes are damaged (it does not "
                     "start with LBMCCKP): it cannot be resumed; move it aside or delete it to "
                     "start afresh",
                     ck->path);
  } else if (hd.kind == LBMC_CKPT_DAMAGED) {
    err = LBMC_ERROR(LBMC_ERR_FILE,
                     "%s is damaged: its header (the job it was made for) fails its checksum, so "
                     "its replicas cannot be trusted to belong to this job: move it aside or "
                     "delete it to start afresh",
                     ck->path);
  } else if (!resume) {
    err = LBMC_ERROR(LBMC_ERR_ARG,
                     "%s exists: an earlier run of this output did not finish (it was stopped "
                     "or killed); continue it with --resume, or delete the file to start afresh",
                     ck->path);
  } else {
    err = lbmc_ckpt_check_header(ck, &hd, job);
    if (!err) err = lbmc_ckpt_replay(ck, job, &map, &hd, visit, ctx);
  }
  lbmc_ckpt_unmap(&map);
  return err;
}

lbmc_err lbmc_checkpoint_open(const char *path, int resume, const lbmc_job *job, size_t total,
                              long batches, long shard_index, long shard_count,
                              lbmc_err (*visit)(const void *record, size_t size, void *ctx),
                              void *ctx, lbmc_checkpoint **out)
{
  lbmc_checkpoint *ck = calloc(1, sizeof *ck);
  lbmc_err err;
  int created = 0, fresh = 0;
  *out = NULL;
  if (!ck || !(ck->path = strdup(path))) {
    free(ck);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "checkpoint: out of memory");
  }
  ck->fd = -1;
  ck->total = total;
  ck->batches = batches;
  ck->shard[0] = shard_count > 0 ? shard_index : 0;
  ck->shard[1] = shard_count > 0 ? shard_count : 0;
  err = lbmc_ckpt_open_file(ck, &created);
  if (!err && !created) err = lbmc_ckpt_existing(ck, resume, job, visit, ctx, &fresh);
  if (!err && (created || fresh)) err = lbmc_ckpt_write_header(ck, job);
  if (!err && !created && !fresh) { /* this run holds it now */
    char slot[LBMC_CKPT_OWNER];
    lbmc_ckpt_owner_text(slot);
    if (lbmc_ckpt_pwrite(ck->fd, slot, sizeof slot, 8))
      err =
          LBMC_ERROR(LBMC_ERR_FILE, "cannot write to the checkpoint %s: %s", path, strerror(errno));
  }
  if (err) {
    if (created && ck->locked && ck->end == 0) unlink(path); /* made here, holds nothing */
    if (ck->fd >= 0) close(ck->fd);
    free(ck->path);
    free(ck);
    return err;
  }
  *out = ck;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_checkpoint_append(lbmc_checkpoint *ck, const void *record, size_t size)
{
  uint32_t crc = lbmc_ckpt_crc(record, size);
  struct iovec iov[2] = {{(void *)record, size}, {&crc, sizeof crc}};
  ssize_t n;
  do /* the record and its CRC in one call */
    n = pwritev(ck->fd, iov, 2, ck->end);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t)(size + sizeof crc)) {
    const int e = n < 0 ? errno : ENOSPC; /* a short write to a file: the disk filled */
    if (ftruncate(ck->fd, ck->end) != 0) {
      /* a half record stays: the replay drops it as cut short */
    }
    return LBMC_ERROR(LBMC_ERR_FILE,
                      "cannot append to the checkpoint %s: %s (its earlier records are kept)",
                      ck->path, strerror(e));
  }
  ck->end += (off_t)(size + sizeof crc);
  return LBMC_SUCCESS;
}

int lbmc_checkpoint_is(const char *path)
{
  char magic[7];
  FILE *f = fopen(path, "rb");
  int is = f && fread(magic, 1, 7, f) == 7 && memcmp(magic, LBMC_CKPT_MAGIC, 7) == 0;
  if (f) fclose(f);
  return is;
}

int lbmc_checkpoint_shard(const char *path, long *index, long *count)
{
  int fd = open(path, O_RDONLY), known = 0;
  lbmc_ckpt_map map = {NULL, 0};
  lbmc_ckpt_header hd;
  if (fd < 0) return 0;
  if (lbmc_ckpt_map_fd(fd, &map) == 0) {
    lbmc_ckpt_parse_header(map.m, map.size, &hd);
    known = hd.kind == LBMC_CKPT_GOOD && hd.h[4] >= 0;
    *index = (long)hd.h[3];
    *count = (long)hd.h[4];
    lbmc_ckpt_unmap(&map);
  }
  close(fd);
  return known;
}

/* lbmc info: the points of the good records. */
typedef struct {
  long *points;
  long n, cap;
} lbmc_ckpt_points;

static lbmc_err lbmc_ckpt_count_point(const unsigned char *rec, size_t size, void *ctx)
{
  lbmc_ckpt_points *p = ctx;
  lbmc_record r;
  if (lbmc_record_view(rec, size, &r) != 0) return LBMC_SUCCESS;
  if (p->n == p->cap) {
    long cap = p->cap ? 2 * p->cap : 64, *more = realloc(p->points, sizeof *more * (size_t)cap);
    if (!more) return LBMC_ERROR(LBMC_ERR_MEMORY, "checkpoint: out of memory");
    p->points = more, p->cap = cap;
  }
  p->points[p->n++] = (long)r.h.point;
  return LBMC_SUCCESS;
}

static int lbmc_ckpt_long_cmp(const void *a, const void *b)
{
  const long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

lbmc_err lbmc_checkpoint_describe(const char *path, lbmc_ckpt_summary *sum)
{
  int fd = open(path, O_RDONLY);
  lbmc_ckpt_map map = {NULL, 0};
  lbmc_ckpt_header hd;
  lbmc_ckpt_scan sc;
  lbmc_ckpt_points pts = {NULL, 0, 0};
  lbmc_err err = LBMC_SUCCESS;
  memset(sum, 0, sizeof *sum);
  memset(&sc, 0, sizeof sc);
  if (fd < 0 || lbmc_ckpt_map_fd(fd, &map)) {
    if (fd >= 0) close(fd);
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: cannot read it: %s", path, strerror(errno));
  }
  lbmc_ckpt_parse_header(map.m, map.size, &hd);
  sum->format = hd.format;
  sum->complete_header = hd.kind != LBMC_CKPT_INCOMPLETE;
  sum->damaged_header = hd.kind == LBMC_CKPT_DAMAGED;
  if (hd.kind == LBMC_CKPT_FOREIGN) {
    lbmc_ckpt_unmap(&map);
    close(fd);
    return LBMC_ERROR(LBMC_ERR_ARG, "%s is not an lbmc checkpoint", path);
  }
  if (hd.format >= '4' && hd.kind != LBMC_CKPT_INCOMPLETE) {
    lbmc_ckpt_owner_read(fd, sum->owner, sizeof sum->owner);
    if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
      flock(fd, LOCK_UN);
      sum->live = 0;
    } else {
      sum->live = errno == EWOULDBLOCK || errno == EAGAIN ? 1 : -1;
    }
  }
  if (hd.kind == LBMC_CKPT_GOOD) {
    sum->job_text = malloc((size_t)hd.len + 1);
    if (!sum->job_text) err = LBMC_ERROR(LBMC_ERR_MEMORY, "checkpoint: out of memory");
    if (!err) {
      memcpy(sum->job_text, hd.text, (size_t)hd.len);
      sum->job_text[hd.len] = '\0';
      sum->seed = (long)hd.h[0];
      sum->total = (size_t)hd.h[1];
      sum->batches = (long)hd.h[2];
      sum->shard_index = (long)hd.h[3];
      sum->shard_count = (long)hd.h[4];
      err = lbmc_ckpt_scan_records(map.m, map.size, hd.end, lbmc_ckpt_count_point, &pts, &sc);
    }
  }
  sum->replicas = sc.records;
  sum->damaged = sc.stretches;
  sum->damaged_records = sc.stretches ? lbmc_ckpt_damaged_records(&sc) : 0;
  sum->damaged_bytes = sc.damaged_bytes;
  sum->torn_bytes = sc.torn_bytes;
  if (pts.n > 0) /* qsort of NULL, 0 (no records read) is undefined */
    qsort(pts.points, (size_t)pts.n, sizeof *pts.points, lbmc_ckpt_long_cmp);
  for (long i = 0; i < pts.n; i++) sum->points += i == 0 || pts.points[i] != pts.points[i - 1];
  free(pts.points);
  free(sc.spans);
  lbmc_ckpt_unmap(&map);
  close(fd);
  return err;
}

void lbmc_checkpoint_sync(lbmc_checkpoint *ck)
{
  if (ck && ck->fd >= 0) fsync(ck->fd);
}

void lbmc_checkpoint_close(lbmc_checkpoint **ck, int remove)
{
  static const char zeros[LBMC_CKPT_OWNER] = {0};
  if (!ck || !*ck) return;
  if ((*ck)->fd >= 0) {
    if (remove && (*ck)->path)
      unlink((*ck)->path); /* still locked: nobody opens it in between */
    else if (lbmc_ckpt_pwrite((*ck)->fd, zeros, sizeof zeros, 8) == 0)
      fsync((*ck)->fd); /* the owner slot cleared: closed in order */
    if (remove) lbmc_fsync_dir((*ck)->path);
    close((*ck)->fd);
  }
  free((*ck)->path);
  free(*ck);
  *ck = NULL;
}
