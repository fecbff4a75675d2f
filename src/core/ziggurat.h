/* Private: exponential variates by the ziggurat method (Marsaglia & Tsang, "The
 * ziggurat method for generating random variables", J. Statistical Software 5(8),
 * 2000, REXP/efix/zigset with 256 layers), driven by an lbmc_stream.
 *
 * One uniform u gives b = floor(u 2^53): the top 8 bits pick the layer and the
 * other 45 the abscissa (independent bits, as Doornik, "An improved ziggurat method
 * to generate normal random samples", 2005, recommends). SPRNG's MLFG doubles carry
 * 52 random bits, so the lowest abscissa bit is always 0: 44 effective bits, far
 * finer than any statistic can see. About 98.9% of the
 * draws end in the fast path: one uniform, one compare, one multiply, no log. */
#ifndef LBMC_ZIGGURAT_H
#define LBMC_ZIGGURAT_H

#include <stdint.h>

#include "stream.h"

typedef struct {
  uint64_t k[256]; /* acceptance thresholds on the 45-bit abscissa */
  double w[256];   /* abscissa scale of each layer */
  double f[256];   /* exp(-x_i) at each layer's right edge */
} lbmc_zig_exp;

/** Fill the tables (deterministic; no randomness used). */
void lbmc_zig_exp_init(lbmc_zig_exp *z);

/** Slow path: the draw (layer iz, abscissa jz) fell outside the inner rectangle;
 *  returns the variate or a negative number to ask for a fresh draw. */
double lbmc_zig_exp_slow(lbmc_stream *s, const lbmc_zig_exp *z, uint32_t iz, uint64_t jz);

#define LBMC_ZIG_MASK ((1ULL << 45) - 1)

/* The normal ziggurat of GSL (gsl_ran_gaussian_ziggurat, randist/gausszig.c: Marsaglia
 * & Tsang 2000 with 128 layers per sign, tables by J. Voss), its tables copied from GSL
 * 2.7, so that lbmc_normal_zig draws the same numbers from the same uniforms as
 * gsl_ran_gaussian_ziggurat(r, 1.0) on a gsl_rng reading `s` through
 * lbmc_sampler_create (whose integers are floor(u 2^32)): layer w, inner-rectangle bound
 * k (on the 24-bit abscissa) and density y = exp(-x^2 / 2) at each layer's edge. The
 * unit test test_ziggurat compares the two bit for bit. */
extern const double lbmc_gz_w[128], lbmc_gz_y[128];
extern const uint32_t lbmc_gz_k[128];

/** The slow path of lbmc_normal_zig: the draw k = floor(u 2^32) fell outside its inner
 *  rectangle; the variate (further uniforms from s as GSL takes them). */
double lbmc_normal_zig_slow(lbmc_stream *s, uint32_t k);

/** Standard normal, bit for bit gsl_ran_gaussian_ziggurat(r, 1.0) on a sampler of s
 *  (lbmc_sampler_create), without its calls through the gsl_rng: one uniform u, k =
 *  floor(u 2^32): bits 0-6 the layer, bit 7 the sign, bits 8-31 the abscissa. */
static inline double lbmc_normal_zig(lbmc_stream *s)
{
  const uint32_t k = (uint32_t)(lbmc_u01(s) * 4294967296.0);
  const uint32_t i = k & 0x7f, j = (k >> 8) & 0xffffff;
  const double x = (double)j * lbmc_gz_w[i];
  if (j < lbmc_gz_k[i]) return (k & 0x80) ? x : -x;
  return lbmc_normal_zig_slow(s, k);
}

/** Exponential with mean 1. */
static inline double lbmc_exp_zig(lbmc_stream *s, const lbmc_zig_exp *z)
{
  for (;;) {
    uint64_t b = (uint64_t)(int64_t)(lbmc_u01(s) * 0x1p53); /* < 2^53: the signed conversion */
    uint32_t iz = (uint32_t)(b >> 45);
    uint64_t jz = b & LBMC_ZIG_MASK;
    double x;
    if (jz < z->k[iz]) return (double)jz * z->w[iz];
    x = lbmc_zig_exp_slow(s, z, iz, jz);
    if (x >= 0) return x;
  }
}

#endif
