/* Private: SHA-256 (FIPS 180-4), for the content digests of results files
 * (h5seal.c). Nothing here is collective. */
#ifndef LBMC_SHA256_H
#define LBMC_SHA256_H

#include <stddef.h>
#include <stdint.h>

/** A running SHA-256. */
typedef struct {
  uint32_t h[8];
  uint64_t bytes;          /* message length so far */
  unsigned char block[64]; /* the part of the current block filled */
} lbmc_sha256;

void lbmc_sha256_init(lbmc_sha256 *s);
/** Add len bytes at data. */
void lbmc_sha256_add(lbmc_sha256 *s, const void *data, size_t len);
/** The digest (32 bytes) of everything added; s must be initialised again for reuse. */
void lbmc_sha256_final(lbmc_sha256 *s, unsigned char digest[32]);
/** The digest as 64 lowercase hexadecimal digits and a NUL into hex (65 bytes). */
void lbmc_sha256_hex(const unsigned char digest[32], char hex[65]);

#endif
