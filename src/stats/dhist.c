/* Histograms of times without a fixed range (bins relative to the model's time scale,
 * under- and overflow counted, min and max kept, atoms exact): merging, quantiles with a
 * documented bin error, interpolated counts for the Woodruff intervals, and a compact
 * byte form for replica records. See dhist.h. */
#include "dhist.h"

#include <math.h>

void lbmc_dhist_init(lbmc_dhist *h, double scale)
{
  memset(h, 0, sizeof *h);
  h->scale = scale;
  h->inv_scale = 1.0 / scale;
  h->min = INFINITY;
  h->max = 0;
}

lbmc_err lbmc_dhist_merge(lbmc_dhist *dst, const lbmc_dhist *src)
{
  if (dst->scale != src->scale)
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "histograms with time scales %.17g and %.17g merged",
                      dst->scale, src->scale);
  dst->zero += src->zero;
  dst->under += src->under;
  dst->over += src->over;
  for (uint32_t b = 0; b < LBMC_DHIST_BINS; b++) {
    if (!src->counts[b]) continue;
    if (!dst->counts[b])
      dst->first[b] = src->first[b];
    else if (src->first[b] != dst->first[b])
      dst->mixed[b / 64] |= 1ULL << (b % 64);
    dst->mixed[b / 64] |= src->mixed[b / 64] & (1ULL << (b % 64));
    dst->counts[b] += src->counts[b];
  }
  if (src->min < dst->min) dst->min = src->min;
  if (src->max > dst->max) dst->max = src->max;
  return LBMC_SUCCESS;
}

uint64_t lbmc_dhist_total(const lbmc_dhist *h)
{
  uint64_t t = h->zero + h->under + h->over;
  for (uint32_t b = 0; b < LBMC_DHIST_BINS; b++) t += h->counts[b];
  return t;
}

double lbmc_dhist_edge(const lbmc_dhist *h, uint32_t b)
{
  uint32_t o = b / LBMC_DHIST_SUB, j = b % LBMC_DHIST_SUB;
  return h->scale * ldexp(1.0 + (double)j / LBMC_DHIST_SUB, LBMC_DHIST_EMIN + (int)o);
}

/* Bin of a value x > 0 as lbmc_dhist_add files it: -1 below the range, LBMC_DHIST_BINS
 * above it. */
static long lbmc_dhist_bin(const lbmc_dhist *h, double x)
{
  double v = x * h->inv_scale;
  uint64_t u;
  int e;
  memcpy(&u, &v, sizeof u);
  e = (int)((u >> 52) & 0x7ff) - 1023 - LBMC_DHIST_EMIN;
  if (e < 0) return -1;
  if (e >= LBMC_DHIST_OCTAVES) return LBMC_DHIST_BINS;
  return (long)e * LBMC_DHIST_SUB +
         (long)((u >> (52 - LBMC_DHIST_SUB_BITS)) & (LBMC_DHIST_SUB - 1));
}

/* The values bin b may hold: its edges clamped to the values seen, or its one value. */
static void lbmc_dhist_clamped(const lbmc_dhist *h, uint32_t b, double *lo, double *hi)
{
  if (!(h->mixed[b / 64] & (1ULL << (b % 64)))) {
    *lo = *hi = h->first[b];
    return;
  }
  *lo = fmax(lbmc_dhist_edge(h, b), h->min);
  *hi = fmin(lbmc_dhist_edge(h, b + 1), h->max);
  if (*hi < *lo) *hi = *lo;
}

unsigned lbmc_dhist_quantile(const lbmc_dhist *h, double p, double *x)
{
  uint64_t total = lbmc_dhist_total(h);
  double rank = p * (double)total, cum;
  if (total == 0) {
    *x = NAN;
    return LBMC_IV_EMPTY;
  }
  *x = 0;
  if (rank <= (double)h->zero) return 0;
  cum = (double)(h->zero + h->under);
  if (rank <= cum) {
    *x = lbmc_dhist_edge(h, 0);
    return LBMC_IV_BELOW_RANGE;
  }
  for (uint32_t b = 0; b < LBMC_DHIST_BINS; b++) {
    double c = (double)h->counts[b], lo, hi;
    if (c == 0) continue;
    if (cum + c >= rank) {
      lbmc_dhist_clamped(h, b, &lo, &hi);
      *x = lo + (hi - lo) * (rank - cum) / c;
      return 0;
    }
    cum += c;
  }
  *x = lbmc_dhist_edge(h, LBMC_DHIST_BINS);
  return LBMC_IV_ABOVE_RANGE;
}

static double lbmc_frac(double x, double lo, double hi)
{
  if (!(hi > lo)) return x >= lo ? 1.0 : 0.0;
  return fmin(1.0, fmax(0.0, (x - lo) / (hi - lo)));
}

double lbmc_dhist_count_le(const lbmc_dhist *h, double x)
{
  double c = (double)h->zero, range_lo = lbmc_dhist_edge(h, 0);
  double range_hi = lbmc_dhist_edge(h, LBMC_DHIST_BINS), lo, hi;
  long bin;
  if (x < 0) return 0;
  if (x == 0) return c;
  if (x < range_lo) return c + (double)h->under * lbmc_frac(x, h->min, range_lo);
  c += (double)h->under;
  bin = x >= range_hi ? LBMC_DHIST_BINS : lbmc_dhist_bin(h, x);
  if (bin < 0) bin = 0; /* rounding at the lower end of the range */
  for (long b = 0; b < bin; b++) c += (double)h->counts[b];
  if (bin == LBMC_DHIST_BINS) return c + (double)h->over * lbmc_frac(x, range_hi, h->max);
  lbmc_dhist_clamped(h, (uint32_t)bin, &lo, &hi);
  return c + (double)h->counts[bin] * lbmc_frac(x, lo, hi);
}

/* ---- byte form ---- */

static size_t lbmc_put_varint(unsigned char *buf, size_t pos, size_t cap, uint64_t v)
{
  do {
    unsigned char byte = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) byte |= 0x80;
    if (pos < cap) buf[pos] = byte;
    pos++;
  } while (v);
  return pos;
}

static size_t lbmc_put_double(unsigned char *buf, size_t pos, size_t cap, double d)
{
  if (pos + sizeof d <= cap) memcpy(buf + pos, &d, sizeof d);
  return pos + sizeof d;
}

size_t lbmc_dhist_pack(const lbmc_dhist *h, unsigned char *buf, size_t cap)
{
  size_t pos = 0;
  uint64_t nnz = 0, prev = 0;
  for (uint32_t b = 0; b < LBMC_DHIST_BINS; b++) nnz += h->counts[b] != 0;
  pos = lbmc_put_double(buf, pos, cap, h->scale);
  pos = lbmc_put_double(buf, pos, cap, h->min);
  pos = lbmc_put_double(buf, pos, cap, h->max);
  pos = lbmc_put_varint(buf, pos, cap, h->zero);
  pos = lbmc_put_varint(buf, pos, cap, h->under);
  pos = lbmc_put_varint(buf, pos, cap, h->over);
  pos = lbmc_put_varint(buf, pos, cap, nnz);
  for (uint32_t b = 0; b < LBMC_DHIST_BINS; b++)
    if (h->counts[b]) {
      int one = !(h->mixed[b / 64] & (1ULL << (b % 64)));
      pos = lbmc_put_varint(buf, pos, cap, 2 * (b - prev) + (uint64_t)one);
      pos = lbmc_put_varint(buf, pos, cap, h->counts[b]);
      if (one) pos = lbmc_put_double(buf, pos, cap, h->first[b]);
      prev = b;
    }
  return pos;
}

static int lbmc_get_varint(const unsigned char *buf, size_t len, size_t *pos, uint64_t *v)
{
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= len) return -1;
    *v |= (uint64_t)(buf[*pos] & 0x7f) << shift;
    if (!(buf[(*pos)++] & 0x80)) return 0;
  }
  return -1;
}

lbmc_err lbmc_dhist_unpack(lbmc_dhist *h, const unsigned char *buf, size_t len, size_t *used)
{
  size_t pos = 3 * sizeof(double);
  uint64_t nnz, b = 0, step, c;
  double d[3];
  if (len < pos) goto bad;
  memcpy(d, buf, sizeof d);
  if (!(d[0] > 0) || !isfinite(d[0])) goto bad;
  lbmc_dhist_init(h, d[0]);
  h->min = d[1];
  h->max = d[2];
  if (lbmc_get_varint(buf, len, &pos, &h->zero) || lbmc_get_varint(buf, len, &pos, &h->under) ||
      lbmc_get_varint(buf, len, &pos, &h->over) || lbmc_get_varint(buf, len, &pos, &nnz) ||
      nnz > LBMC_DHIST_BINS)
    goto bad;
  for (uint64_t k = 0; k < nnz; k++) {
    if (lbmc_get_varint(buf, len, &pos, &step) || lbmc_get_varint(buf, len, &pos, &c)) goto bad;
    b += step / 2;
    if (b >= LBMC_DHIST_BINS || (k > 0 && step / 2 == 0) || c == 0) goto bad;
    h->counts[b] = c;
    if (step % 2) { /* the bin's one value */
      if (pos + sizeof(double) > len) goto bad;
      memcpy(&h->first[b], buf + pos, sizeof(double));
      pos += sizeof(double);
    } else {
      h->mixed[b / 64] |= 1ULL << (b % 64);
    }
  }
  *used = pos;
  return LBMC_SUCCESS;
bad:
  return LBMC_ERROR(LBMC_ERR_FILE, "a histogram in a replica record is truncated or malformed");
}
