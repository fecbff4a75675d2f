/* One finished replica as bytes (record.h): its size, packing, reading in place, and
 * its histograms. */
#include "record.h"

#include <math.h>
#include <string.h>

#define LBMC_ALIGN8(n) (((n) + 7) & ~(size_t)7)

size_t lbmc_record_size(size_t S, size_t W, size_t G, size_t qbytes)
{
  return sizeof(lbmc_record_head) + sizeof(int64_t) * (G + 1) + sizeof(double) * S * W +
         LBMC_ALIGN8(qbytes);
}

/* Items of the quantile data of G groups: 2 G histograms, G mixtures or none. */
static size_t lbmc_record_items(int64_t qkind, size_t G)
{
  return qkind == LBMC_QK_HIST ? 2 * G : qkind == LBMC_QK_MIX ? G : 0;
}

/* Bytes of item i packed at q (q NULL: only the size). */
static size_t lbmc_record_item(const lbmc_record_head *h, const lbmc_dhist *hist,
                               const lbmc_mixture *const *mix, size_t i, unsigned char *q)
{
  if (h->qkind == LBMC_QK_HIST) return lbmc_dhist_pack(&hist[i], q, q ? (size_t)-1 : 0);
  return q ? lbmc_mixture_pack(mix[i], q, lbmc_mixture_packed_size(mix[i]))
           : lbmc_mixture_packed_size(mix[i]);
}

size_t lbmc_record_pack(void *buf, size_t cap, const lbmc_record_head *h,
                        const int64_t *group_start, const double *seg, const lbmc_dhist *hist,
                        const lbmc_mixture *const *mix)
{
  const size_t S = (size_t)h->S, W = (size_t)h->W, G = (size_t)h->G;
  const size_t items = lbmc_record_items(h->qkind, G);
  size_t qbytes = 0;
  unsigned char *b = buf, *q;
  lbmc_record_head head = *h;
  size_t size;
  for (size_t i = 0; i < items; i++)
    qbytes += sizeof(uint64_t) + lbmc_record_item(h, hist, mix, i, NULL);
  qbytes = LBMC_ALIGN8(qbytes);
  size = lbmc_record_size(S, W, G, qbytes);
  if (size > cap) return size;
  head.bytes = (int64_t)size;
  head.version = LBMC_RECORD_VERSION;
  head.qbytes = (int64_t)qbytes;
  memcpy(b, &head, sizeof head);
  b += sizeof head;
  memcpy(b, group_start, sizeof(int64_t) * (G + 1));
  b += sizeof(int64_t) * (G + 1);
  memcpy(b, seg, sizeof(double) * S * W);
  q = b + sizeof(double) * S * W;
  memset(q, 0, qbytes);
  for (size_t i = 0; i < items; i++) {
    uint64_t len = lbmc_record_item(h, hist, mix, i, q + sizeof len);
    memcpy(q, &len, sizeof len);
    q += sizeof len + len;
  }
  return size;
}

size_t lbmc_record_size_of(const void *buf)
{
  int64_t bytes;
  memcpy(&bytes, buf, sizeof bytes);
  if (bytes < (int64_t)lbmc_record_size(0, 0, 0, 0) || bytes % 8 || bytes > ((int64_t)1 << 40))
    return 0;
  return (size_t)bytes;
}

int lbmc_record_view(const void *buf, size_t len, lbmc_record *rec)
{
  const unsigned char *b = buf;
  const lbmc_record_head *h = &rec->h;
  if (len < sizeof rec->h) return -1;
  memcpy(&rec->h, buf, sizeof rec->h);
  if (h->version != LBMC_RECORD_VERSION || h->bytes != (int64_t)len || h->S < 0 || h->W < 1 ||
      h->G < 0 || h->qbytes < 0 || h->S > ((int64_t)1 << 24) || h->W > ((int64_t)1 << 24) ||
      h->G > h->S + 1 || h->qkind < LBMC_QK_NONE || h->qkind > LBMC_QK_MIX ||
      lbmc_record_size((size_t)h->S, (size_t)h->W, (size_t)h->G, (size_t)h->qbytes) != len)
    return -1;
  rec->bytes = buf;
  rec->group_start = (const int64_t *)(const void *)(b + sizeof rec->h);
  rec->seg = (const double *)(const void *)(rec->group_start + h->G + 1);
  rec->q = (const unsigned char *)(rec->seg + h->S * h->W);
  for (int64_t g = 0; g <= h->G; g++)
    if (rec->group_start[g] < 0 || rec->group_start[g] > h->S ||
        (g > 0 && rec->group_start[g] < rec->group_start[g - 1]))
      return -1;
  return 0;
}

/* Item `want` of the quantile data: its bytes *at, *len; -1 when truncated. */
static int lbmc_record_find(const lbmc_record *rec, size_t want, const unsigned char **at,
                            size_t *len)
{
  const unsigned char *q = rec->q, *end = rec->q + rec->h.qbytes;
  for (size_t i = 0;; i++) {
    uint64_t n;
    if (end - q < (ptrdiff_t)sizeof n) return -1;
    memcpy(&n, q, sizeof n);
    q += sizeof n;
    if ((uint64_t)(end - q) < n) return -1;
    if (i == want) {
      *at = q;
      *len = (size_t)n;
      return 0;
    }
    q += n;
  }
}

lbmc_err lbmc_record_hist(const lbmc_record *rec, size_t g, int which, lbmc_dhist *h)
{
  const size_t want = 2 * g + (size_t)which;
  const unsigned char *at;
  size_t len, used;
  if (rec->h.qkind != LBMC_QK_HIST || g >= (size_t)rec->h.G || which < 0 || which > 1)
    return LBMC_ERROR(LBMC_ERR_ARG, "replica record: no histogram %zu of group %zu", want, g);
  if (lbmc_record_find(rec, want, &at, &len))
    return LBMC_ERROR(LBMC_ERR_FILE, "a histogram in a replica record is truncated or malformed");
  return lbmc_dhist_unpack(h, at, len, &used);
}

lbmc_err lbmc_record_mixture(const lbmc_record *rec, size_t g, lbmc_mixture **mx)
{
  const unsigned char *at;
  size_t len;
  *mx = NULL;
  if (rec->h.qkind != LBMC_QK_MIX || g >= (size_t)rec->h.G)
    return LBMC_ERROR(LBMC_ERR_ARG, "replica record: no mixture of group %zu", g);
  if (lbmc_record_find(rec, g, &at, &len) || lbmc_mixture_unpack(at, len, mx, NULL))
    return LBMC_ERROR(LBMC_ERR_FILE, "a mixture in a replica record is truncated or malformed");
  return LBMC_SUCCESS;
}
