/* Content checksums of HDF5 files (h5seal.h): every object's SHA-256 in its attribute
 * `sha256`, the whole content's in the root attribute `content_sha256`, computed with Nettle's
 * SHA-256 over a canonical form of the values (docs/results-format.md, "Checksums") that the Python
 * reader (analysis/lbmc_analysis/_h5.py) computes the same way. */
#include "h5seal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nettle/sha2.h>

#define LBMC_SEAL_ATTR "sha256"
#define LBMC_ROOT_ATTR "content_sha256"

/* ---- the canonical form of one value (an attribute or a dataset) ---- */

/* len bytes at data into the running SHA-256 (Nettle's, FIPS 180-4). */
static void lbmc_seal_add(struct sha256_ctx *s, const void *data, size_t len)
{
  sha256_update(s, len, (const uint8_t *)data);
}

/* A digest as 64 lowercase hexadecimal digits and a NUL into hex (65 bytes). */
static void lbmc_seal_hex(const unsigned char digest[SHA256_DIGEST_SIZE], char hex[65])
{
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < SHA256_DIGEST_SIZE; i++) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 15];
  }
  hex[64] = '\0';
}

/* n as 8 little-endian bytes. */
static void lbmc_seal_u64(struct sha256_ctx *s, uint64_t n)
{
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(n >> (8 * i));
  lbmc_seal_add(s, b, 8);
}

/* Read a whole attribute (is_attr) or dataset into buf as memory type mem. */
static int lbmc_seal_read(hid_t obj, int is_attr, hid_t mem, void *buf)
{
  return (is_attr ? H5Aread(obj, mem, buf)
                  : H5Dread(obj, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf)) < 0
             ? -1
             : 0;
}

/* Numbers: every element as 8 little-endian bytes of a double ('f') or an int64 ('i'). */
static int lbmc_seal_numbers(struct sha256_ctx *s, hid_t obj, int is_attr, int real, size_t n)
{
  unsigned char *buf = malloc(8 * (n ? n : 1));
  int rc =
      buf ? lbmc_seal_read(obj, is_attr, real ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64, buf) : -1;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    uint64_t u;
    memcpy(&u, buf + 8 * i, 8);
    lbmc_seal_u64(s, u);
  }
  free(buf);
  return rc;
}

/* Strings: every element as its byte length (8 bytes) and its bytes; a fixed-length
 * string ends at its first NUL. */
static int lbmc_seal_strings(struct sha256_ctx *s, hid_t obj, int is_attr, hid_t type, size_t n)
{
  const htri_t var = H5Tis_variable_str(type);
  const size_t size = H5Tget_size(type);
  hid_t mem = H5Tcopy(H5T_C_S1);
  char *buf = NULL;
  int rc = var < 0 || mem < 0 ? -1 : 0;
  if (!rc) {
    if (var)
      rc = H5Tset_size(mem, H5T_VARIABLE) < 0;
    else
      rc = H5Tset_size(mem, size) < 0 || H5Tset_strpad(mem, H5T_STR_NULLPAD) < 0;
  }
  if (!rc) rc = H5Tset_cset(mem, H5Tget_cset(type)) < 0;
  if (!rc) buf = calloc(n ? n : 1, var ? sizeof(char *) : size);
  if (!rc && !buf) rc = -1;
  if (!rc) rc = lbmc_seal_read(obj, is_attr, mem, buf);
  for (size_t i = 0; !rc && i < n; i++) {
    const char *e = var ? ((char **)(void *)buf)[i] : buf + i * size;
    size_t len = !e ? 0 : var ? strlen(e) : strnlen(e, size);
    lbmc_seal_u64(s, len);
    lbmc_seal_add(s, e ? e : "", len);
  }
  if (var && buf && !rc)
    for (size_t i = 0; i < n; i++) H5free_memory(((char **)(void *)buf)[i]);
  free(buf);
  if (mem >= 0) H5Tclose(mem);
  return rc;
}

/* Anything else: its bytes in the native form of its type ('x'; lbmc writes none). */
static int lbmc_seal_raw(struct sha256_ctx *s, hid_t obj, int is_attr, hid_t type, size_t n)
{
  hid_t mem = H5Tget_native_type(type, H5T_DIR_ASCEND);
  size_t size = mem >= 0 ? H5Tget_size(mem) : 0;
  unsigned char *buf = size ? malloc(size * (n ? n : 1)) : NULL;
  int rc = buf ? lbmc_seal_read(obj, is_attr, mem, buf) : -1;
  if (!rc) lbmc_seal_add(s, buf, size * n);
  free(buf);
  if (mem >= 0) H5Tclose(mem);
  return rc;
}

/* The canonical form of an attribute or dataset: its kind ('f', 'i', 's', 'x'), its rank
 * and dimensions (8 bytes each), its elements. */
static int lbmc_seal_value(struct sha256_ctx *s, hid_t obj, int is_attr)
{
  hid_t type = is_attr ? H5Aget_type(obj) : H5Dget_type(obj);
  hid_t space = is_attr ? H5Aget_space(obj) : H5Dget_space(obj);
  hsize_t dims[H5S_MAX_RANK];
  int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1, rc = -1;
  H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
  size_t n = 1;
  if (rank >= 0 && H5Sget_simple_extent_dims(space, dims, NULL) >= 0 && cls != H5T_NO_CLASS) {
    const char kind = cls == H5T_FLOAT     ? 'f'
                      : cls == H5T_INTEGER ? 'i'
                      : cls == H5T_STRING  ? 's'
                                           : 'x';
    for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
    lbmc_seal_add(s, &kind, 1);
    lbmc_seal_u64(s, (uint64_t)rank);
    for (int i = 0; i < rank; i++) lbmc_seal_u64(s, dims[i]);
    if (n == 0)
      rc = 0;
    else if (kind == 'f' || kind == 'i')
      rc = lbmc_seal_numbers(s, obj, is_attr, kind == 'f', n);
    else if (kind == 's')
      rc = lbmc_seal_strings(s, obj, is_attr, type, n);
    else
      rc = lbmc_seal_raw(s, obj, is_attr, type, n);
  }
  if (type >= 0) H5Tclose(type);
  if (space >= 0) H5Sclose(space);
  return rc;
}

/* ---- names: attributes of an object, objects of a file, each sorted ---- */

typedef struct {
  char **name;
  size_t n, cap;
} lbmc_names;

static int lbmc_names_add(lbmc_names *l, const char *name)
{
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 32;
    char **more = realloc(l->name, cap * sizeof *more);
    if (!more) return -1;
    l->name = more;
    l->cap = cap;
  }
  if (!(l->name[l->n] = strdup(name))) return -1;
  l->n++;
  return 0;
}

static void lbmc_names_free(lbmc_names *l)
{
  for (size_t i = 0; i < l->n; i++) free(l->name[i]);
  free(l->name);
  memset(l, 0, sizeof *l);
}

static int lbmc_names_cmp(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static herr_t lbmc_seal_attr_name(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
  (void)loc, (void)info;
  return lbmc_names_add(data, name) ? -1 : 0;
}

static herr_t lbmc_seal_link(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
  (void)g;
  if (info->type != H5L_TYPE_HARD) return 0; /* lbmc makes hard links only */
  return lbmc_names_add(data, name) ? -1 : 0;
}

/* Every object of the file below the root, by path ("estimates/p_wait/mean"), sorted. */
static int lbmc_seal_objects(hid_t file, lbmc_names *paths)
{
  if (H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, lbmc_seal_link, paths) < 0) return -1;
  qsort(paths->name, paths->n, sizeof *paths->name, lbmc_names_cmp);
  return 0;
}

/* Add every attribute of obj but `skip` ('A', its name, a NUL, its value) in name order. */
static int lbmc_seal_attrs(struct sha256_ctx *s, hid_t obj, const char *skip)
{
  lbmc_names names = {0};
  hsize_t at = 0;
  int rc = H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &at, lbmc_seal_attr_name, &names) < 0;
  if (!rc) qsort(names.name, names.n, sizeof *names.name, lbmc_names_cmp);
  for (size_t i = 0; !rc && i < names.n; i++) {
    hid_t a;
    if (strcmp(names.name[i], skip) == 0) continue;
    a = H5Aopen(obj, names.name[i], H5P_DEFAULT);
    lbmc_seal_add(s, "A", 1);
    lbmc_seal_add(s, names.name[i], strlen(names.name[i]) + 1);
    rc = a < 0 || lbmc_seal_value(s, a, 1);
    if (a >= 0) H5Aclose(a);
  }
  lbmc_names_free(&names);
  return rc ? -1 : 0;
}

/* The digest of one object: its attributes but sha256, and for a dataset 'D' and its
 * values. */
static int lbmc_seal_object(hid_t obj, unsigned char digest[32])
{
  struct sha256_ctx s;
  int rc;
  sha256_init(&s);
  rc = lbmc_seal_attrs(&s, obj, LBMC_SEAL_ATTR);
  if (!rc && H5Iget_type(obj) == H5I_DATASET) {
    lbmc_seal_add(&s, "D", 1);
    rc = lbmc_seal_value(&s, obj, 0);
  }
  sha256_digest(&s, SHA256_DIGEST_SIZE, digest);
  return rc;
}

/* A fixed-length attribute of 64 characters (a digest in hexadecimal): kept in the
 * object's header, which HDF5 checksums itself (file format of HDF5 1.10, h5file.c). */
static int lbmc_seal_write_hex(hid_t obj, const char *name, const unsigned char digest[32])
{
  char hex[65];
  hid_t t = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR), a = -1;
  int rc = t < 0 || space < 0 || H5Tset_size(t, 64) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0;
  lbmc_seal_hex(digest, hex);
  if (!rc && H5Aexists(obj, name) > 0) rc = H5Adelete(obj, name) < 0;
  if (!rc) rc = (a = H5Acreate2(obj, name, t, space, H5P_DEFAULT, H5P_DEFAULT)) < 0;
  if (!rc) rc = H5Awrite(a, t, hex) < 0;
  if (a >= 0) H5Aclose(a);
  if (space >= 0) H5Sclose(space);
  if (t >= 0) H5Tclose(t);
  return rc ? -1 : 0;
}

/* The stored digest `name` of obj in hexadecimal into hex (65 bytes); -1 if it has none
 * that reads as 64 characters. */
static int lbmc_seal_read_hex(hid_t obj, const char *name, char hex[65])
{
  hid_t a, t = -1, ft = -1;
  int rc = -1;
  memset(hex, 0, 65);
  if (H5Aexists(obj, name) <= 0 || (a = H5Aopen(obj, name, H5P_DEFAULT)) < 0) return -1;
  ft = H5Aget_type(a);
  if (ft >= 0 && H5Tget_class(ft) == H5T_STRING && H5Tis_variable_str(ft) == 0 &&
      H5Tget_size(ft) == 64 && (t = H5Tcopy(ft)) >= 0)
    rc = H5Aread(a, t, hex) < 0 ? -1 : 0;
  if (t >= 0) H5Tclose(t);
  if (ft >= 0) H5Tclose(ft);
  H5Aclose(a);
  return rc == 0 && strlen(hex) == 64 ? 0 : -1;
}

/* The whole content's digest: the root's attributes but content_sha256, then 'O', the
 * path, a NUL and the digest of each object in path order. */
static void lbmc_seal_root(hid_t file, const lbmc_names *paths, const unsigned char *digests,
                           unsigned char out[32], int *rc)
{
  struct sha256_ctx s;
  sha256_init(&s);
  *rc = lbmc_seal_attrs(&s, file, LBMC_ROOT_ATTR);
  for (size_t i = 0; i < paths->n; i++) {
    lbmc_seal_add(&s, "O", 1);
    lbmc_seal_add(&s, paths->name[i], strlen(paths->name[i]) + 1);
    lbmc_seal_add(&s, digests + 32 * i, 32);
  }
  sha256_digest(&s, SHA256_DIGEST_SIZE, out);
}

int lbmc_h5_seal(hid_t file)
{
  lbmc_names paths = {0};
  unsigned char *digests = NULL, root[32];
  int rc = lbmc_seal_objects(file, &paths);
  if (!rc && !(digests = malloc(32 * (paths.n + 1)))) rc = -1;
  for (size_t i = 0; !rc && i < paths.n; i++) { /* first every digest, then the attributes */
    hid_t o = H5Oopen(file, paths.name[i], H5P_DEFAULT);
    rc = o < 0 || lbmc_seal_object(o, digests + 32 * i);
    if (o >= 0) H5Oclose(o);
  }
  for (size_t i = 0; !rc && i < paths.n; i++) {
    hid_t o = H5Oopen(file, paths.name[i], H5P_DEFAULT);
    rc = o < 0 || lbmc_seal_write_hex(o, LBMC_SEAL_ATTR, digests + 32 * i);
    if (o >= 0) H5Oclose(o);
  }
  if (!rc) lbmc_seal_root(file, &paths, digests, root, &rc);
  if (!rc) rc = lbmc_seal_write_hex(file, LBMC_ROOT_ATTR, root);
  free(digests);
  lbmc_names_free(&paths);
  return rc ? -1 : 0;
}

/* What HDF5's error stack says of a failed read: whether a Fletcher32 checksum failed,
 * and its innermost message. */
typedef struct {
  int fletcher;
  char last[200];
} lbmc_seal_why;

static herr_t lbmc_seal_why_visit(unsigned n, const H5E_error2_t *e, void *data)
{
  lbmc_seal_why *why = data;
  const char *desc = e->desc ? e->desc : "";
  (void)n;
  if (strstr(desc, "Fletcher32") || strstr(desc, "fletcher32")) why->fletcher = 1;
  if (*desc) snprintf(why->last, sizeof why->last, "%s", desc);
  return 0;
}

/* The message for an object that cannot be read: what HDF5 says. */
static lbmc_err lbmc_seal_unreadable(const char *path, const char *object)
{
  lbmc_seal_why why = {0, ""};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, lbmc_seal_why_visit, &why);
  if (why.fletcher)
    return LBMC_ERROR(LBMC_ERR_FILE,
                      "%s is damaged: /%s fails its Fletcher32 checksum (its stored numbers "
                      "changed after lbmc wrote them); rerun the job (or shard) that made it, "
                      "or restore the file from a copy",
                      path, object);
  return LBMC_ERROR(LBMC_ERR_FILE,
                    "%s is damaged: /%s cannot be read back (HDF5: %s); rerun the job (or "
                    "shard) that made it, or restore the file from a copy",
                    path, object, why.last[0] ? why.last : "no reason given");
}

lbmc_err lbmc_h5_verify(hid_t file, const char *path, int *sealed)
{
  lbmc_names paths = {0};
  unsigned char *digests = NULL, root[32];
  char stored[65] = "", hex[65];
  lbmc_err err = LBMC_SUCCESS;
  int rc = 0;
  const htri_t has = H5Aexists(file, LBMC_ROOT_ATTR);
  *sealed = has != 0;
  if (has < 0) /* the root's object header fails HDF5's own checksum */
    return LBMC_ERROR(LBMC_ERR_FILE,
                      "%s is damaged: its root attributes cannot be read; rerun the job (or "
                      "shard) that made it, or restore the file from a copy",
                      path);
  if (*sealed && lbmc_seal_read_hex(file, LBMC_ROOT_ATTR, stored))
    return LBMC_ERROR(LBMC_ERR_FILE, "%s is damaged: its root attribute %s cannot be read", path,
                      LBMC_ROOT_ATTR);
  if (lbmc_seal_objects(file, &paths) || !(digests = malloc(32 * (paths.n + 1)))) {
    lbmc_names_free(&paths);
    return LBMC_ERROR(LBMC_ERR_FILE,
                      "%s is damaged: the list of its groups and datasets cannot be read", path);
  }
  /* every value is read, also in a file without checksums (then nothing is compared) */
  for (size_t i = 0; !err && i < paths.n; i++) {
    hid_t o = H5Oopen(file, paths.name[i], H5P_DEFAULT);
    if (o < 0 || lbmc_seal_object(o, digests + 32 * i)) {
      err = lbmc_seal_unreadable(path, paths.name[i]);
    } else if (*sealed && lbmc_seal_read_hex(o, LBMC_SEAL_ATTR, hex)) {
      err = LBMC_ERROR(LBMC_ERR_FILE, "%s is damaged: /%s has lost its %s attribute", path,
                       paths.name[i], LBMC_SEAL_ATTR);
    } else if (*sealed) {
      char mine[65];
      lbmc_seal_hex(digests + 32 * i, mine);
      if (strcmp(mine, hex) != 0)
        err = LBMC_ERROR(LBMC_ERR_FILE,
                         "%s is damaged: /%s does not match its SHA-256 checksum (its values or "
                         "attributes changed after lbmc wrote them); rerun the job (or shard) "
                         "that made it, or restore the file from a copy",
                         path, paths.name[i]);
    }
    if (o >= 0) H5Oclose(o);
  }
  if (!err) {
    lbmc_seal_root(file, &paths, digests, root, &rc);
    lbmc_seal_hex(root, hex);
    if (rc)
      err = LBMC_ERROR(LBMC_ERR_FILE, "%s is damaged: its root attributes cannot be read", path);
    else if (*sealed && strcmp(hex, stored) != 0)
      err = LBMC_ERROR(LBMC_ERR_FILE,
                       "%s is damaged: its root attributes (job, seed, ...) or its list of "
                       "datasets changed after lbmc wrote it (%s does not match)",
                       path, LBMC_ROOT_ATTR);
  }
  free(digests);
  lbmc_names_free(&paths);
  return err;
}

/* Exit codes of the child of lbmc_h5_check_file: the file verified (sealed or not), or
 * could not be opened (the parent opens it itself to say why); an error of code e is
 * LBMC_CHECK_ERRORS + e. */
enum {
  LBMC_CHECK_SEALED = 0,
  LBMC_CHECK_UNSEALED = 3,
  LBMC_CHECK_UNOPENED = 4,
  LBMC_CHECK_ERRORS = 16
};

lbmc_err lbmc_h5_check_file(const char *path, int *sealed)
{
  pid_t pid;
  int status;
  *sealed = 0;
  fflush(NULL); /* no buffered output printed twice */
  pid = fork();
  if (pid < 0) return LBMC_ERROR(LBMC_ERR_FILE, "cannot check %s: fork: %s", path, strerror(errno));
  if (pid == 0) { /* the child: open, read every value, check; never returns */
    hid_t f;
    lbmc_err err;
    int s = 0;
    const int crashes[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t k = 0; k < sizeof crashes / sizeof *crashes; k++) /* not MPI's handlers: */
      signal(crashes[k], SIG_DFL);                                /* the parent reports a crash */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) _exit(LBMC_CHECK_UNOPENED);
    err = lbmc_h5_verify(f, path, &s);
    fflush(stderr);
    _exit(err ? LBMC_CHECK_ERRORS + (int)err : s ? LBMC_CHECK_SEALED : LBMC_CHECK_UNSEALED);
  }
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return LBMC_ERROR(LBMC_ERR_FILE, "cannot check %s: waitpid: %s", path, strerror(errno));
  if (WIFSIGNALED(status))
    return LBMC_ERROR(LBMC_ERR_FILE,
                      "%s is damaged: the HDF5 library crashed reading it (signal %d: %s), in a "
                      "process of its own; rerun the job (or shard) that made it, or restore "
                      "the file from a copy",
                      path, WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (!WIFEXITED(status))
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot check %s: its checking process stopped", path);
  status = WEXITSTATUS(status);
  *sealed = status == LBMC_CHECK_SEALED;
  if (status >= LBMC_CHECK_ERRORS) return (lbmc_err)(status - LBMC_CHECK_ERRORS); /* said */
  return LBMC_SUCCESS;
}
