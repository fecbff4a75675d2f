/* Replays saved fuzzer inputs through a fuzz target (fuzz_job.c or fuzz_cli.c) without
 * libFuzzer: replay FILE|DIR... calls LLVMFuzzerTestOneInput once per file (each
 * regular file of a directory, in name order). The test
 * suite runs it on tests/fuzz/inputs/ (crashers found and fixed, and inputs that
 * reach rare paths), in the normal and the sanitized build; a crash or a sanitizer
 * finding fails the test. Exit status 0, or 1 if a file cannot be read. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0, n;
  if (!f) {
    perror(path);
    return 1;
  }
  do {
    if (len == cap) {
      uint8_t *grown = realloc(buf, cap = cap ? 2 * cap : 4096);
      if (!grown) {
        free(buf);
        fclose(f);
        fprintf(stderr, "%s: out of memory\n", path);
        return 1;
      }
      buf = grown;
    }
    n = fread(buf + len, 1, cap - len, f);
    len += n;
  } while (n > 0);
  fclose(f);
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  return 0;
}

/* Every regular file of a directory, in name order; *count += files replayed. */
static int replay_dir(const char *dir, int *count)
{
  struct dirent **names;
  int n = scandir(dir, &names, NULL, alphasort), bad = 0;
  if (n < 0) {
    perror(dir);
    return 1;
  }
  for (int i = 0; i < n; i++) {
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      bad |= replay_file(path);
      (*count)++;
    }
    free(names[i]);
  }
  free(names);
  return bad;
}

int main(int argc, char **argv)
{
  int bad = 0, count = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      bad |= replay_dir(argv[i], &count);
    } else {
      bad |= replay_file(argv[i]);
      count++;
    }
  }
  printf("replayed %d input(s)\n", count);
  return bad;
}
