/* lbmc-jsq2-chain: an independent simulator of JSQ on two exponential servers of rate 1
 * (Poisson arrivals of total rate L, each joining the shorter queue), for checking lbmc's
 * engines near saturation with nothing of lbmc in it: another generator (xoshiro256+,
 * Blackman and Vigna 2018, seeded by splitmix64), no event calendar, no clock. It walks
 * the embedded jump chain of the two queue lengths (a sorted pair; which server takes a
 * tie does not change the total) and weights each visited state by its expected holding
 * time 1 / r (r = L + the busy servers), so that the time average of the customers is
 * the ratio of sums over the jumps (a conditional-expectation estimator: no holding time
 * is drawn). The jumps are cut into B batches of equal length after a burn-in of 10^8;
 * the standard error is the batch means' (each batch should be many relaxation times:
 * at L = 1.98, rho 0.99, tau is about 10^4 time units, 4 x 10^4 jumps).
 *
 * Output: the time-average customers per server and its standard error. Measured
 * (docs/model.md, "Coverage (measured)"): L = 1.98, 1000 batches of 3 x 10^6 jumps:
 * 49.851 +/- 0.240 against the exact 49.992 (about 90 s of CPU).
 *
 * Usage: lbmc-jsq2-chain L BATCHES JUMPS_PER_BATCH SEED (run by hand; not a test) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  uint64_t s[4];
} jc_rng;

static uint64_t jc_splitmix(uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static uint64_t jc_next(jc_rng *g)
{
  uint64_t *s = g->s, r = s[0] + s[3], t = s[1] << 17;
  s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return r;
}

int main(int argc, char **argv)
{
  double L, sum = 0, sum2 = 0;
  long batches, per;
  uint64_t seed;
  long a = 0, b = 0; /* the queue lengths, a <= b */
  jc_rng g;
  if (argc != 5 || (L = atof(argv[1])) <= 0 || L >= 2 || (batches = atol(argv[2])) < 2 ||
      (per = atol(argv[3])) < 1) {
    fprintf(stderr, "usage: lbmc-jsq2-chain L BATCHES JUMPS_PER_BATCH SEED (0 < L < 2, "
                    "BATCHES >= 2, JUMPS_PER_BATCH >= 1)\n");
    return 2;
  }
  seed = strtoull(argv[4], NULL, 10);
  for (int i = 0; i < 4; i++) g.s[i] = jc_splitmix(&seed);
  for (long k = -1; k < batches; k++) { /* k = -1: the burn-in */
    long double num = 0, den = 0;
    const long n = k < 0 ? 100000000 : per;
    for (long i = 0; i < n; i++) {
      const double r = L + (a > 0) + (b > 0), w = 1.0 / r;
      const double u = (double)(jc_next(&g) >> 11) * 0x1p-53 * r;
      long t;
      num += (double)(a + b) * w, den += w;
      if (u < L) /* an arrival joins the shorter queue */
        a++;
      else if (u < L + (b > 0)) /* the longer queue's server completes */
        b--;
      else
        a--;
      if (a > b) t = a, a = b, b = t;
    }
    if (k >= 0) {
      const double m = (double)(num / den) / 2;
      sum += m, sum2 += m * m;
    }
  }
  {
    const double m = sum / (double)batches, v = (sum2 / (double)batches - m * m);
    printf("L %.6g, %ld jumps: customers per server %.5f, standard error %.5f (%ld batches)\n", L,
           batches * per, m, sqrt(v / (double)(batches - 1)), batches);
  }
  return 0;
}
